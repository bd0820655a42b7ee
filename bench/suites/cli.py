"""x"""
TITLE = 'cli'
PARTS = ()
