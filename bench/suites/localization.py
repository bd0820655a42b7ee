"""x"""
TITLE = 'localization'
PARTS = ()
