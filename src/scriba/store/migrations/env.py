"""Alembic environment: migrations run on the connection :func:`migrate` hands over."""

from alembic import context

from scriba.store.schema import metadata

connection = context.config.attributes.get("connection")
context.configure(connection=connection, target_metadata=metadata,
                  render_as_batch=connection is not None and connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
