"""Command-line tools and the xDSL plugin entry point of IrGL on xDSL."""
