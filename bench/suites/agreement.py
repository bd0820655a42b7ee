"""x"""
TITLE = 'agreement'
PARTS = ()
