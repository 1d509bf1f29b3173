"""metajudge.metaeval"""
