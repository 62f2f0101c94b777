"""The team store's server side: schema, shipping and pulling (imports psycopg; never on the hook path)."""
