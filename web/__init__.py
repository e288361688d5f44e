"""`deep-research web`: ask, watch, steer and read research in a browser (`cli.serve_web`)."""
