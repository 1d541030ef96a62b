"""Pages over metrics only: series graph, distribution, build and compare."""
