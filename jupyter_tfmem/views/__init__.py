"""Views of a Footprint: they read one and never compute memory themselves."""
