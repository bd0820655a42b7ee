"""x"""
TITLE = 'classification'
PARTS = ()
