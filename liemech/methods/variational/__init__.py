"""Variational integrators in embedded coordinates: Simpson and midpoint (Rojas-Quintero, Dubois &
Jourdan 2025), and the Bobenko–Suris scheme for the Lagrange top."""
