"""x"""
TITLE = 'predict'
PARTS = ()
