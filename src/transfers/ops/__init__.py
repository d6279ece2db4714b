"""Operating the service from a shell: start-up errors as one line, masking of secrets in what is
printed, probing the database and Redis before anything starts, and the checks of ``transfers doctor``."""
