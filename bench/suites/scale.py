"""x"""
TITLE = 'scale'
PARTS = ()
