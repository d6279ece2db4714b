"""The console's pages, one module per navigation item; each route parses, calls a service, renders."""
