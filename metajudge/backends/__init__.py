"""metajudge.backends"""
