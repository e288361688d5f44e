"""`deep-research web`: ask, watch, steer and read research in a browser (`web.command`)."""
