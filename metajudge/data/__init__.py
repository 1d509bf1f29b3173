"""metajudge.data"""
