"""metajudge.metrics"""
