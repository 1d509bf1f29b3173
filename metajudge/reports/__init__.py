"""metajudge.reports"""
