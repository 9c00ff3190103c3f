"""Creating and changing tables and namespaces: create, alter, upgrade-format, register, namespaces,
drop and rename."""
