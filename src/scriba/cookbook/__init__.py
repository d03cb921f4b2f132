"""The cookbook's recipes: data files read by :mod:`scriba.service.recipes`."""
