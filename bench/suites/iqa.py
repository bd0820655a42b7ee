"""x"""
TITLE = 'iqa'
PARTS = ()
