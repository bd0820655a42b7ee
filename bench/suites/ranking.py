"""x"""
TITLE = 'ranking'
PARTS = ()
