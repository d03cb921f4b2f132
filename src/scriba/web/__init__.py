"""The web application: FastAPI app, JSON API, sign-in, pages (see app.py)."""
