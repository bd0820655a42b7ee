"""x"""
TITLE = 'labeller'
PARTS = ()
