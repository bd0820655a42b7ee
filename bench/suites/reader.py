"""x"""
TITLE = 'reader'
PARTS = ()
