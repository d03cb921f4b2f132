"""Alembic environment: migrations run on the connection the store hands over."""

from alembic import context

from scriba.store.models import Base

connection = context.config.attributes.get("connection")
context.configure(connection=connection, target_metadata=Base.metadata,
                  render_as_batch=connection is not None and connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
