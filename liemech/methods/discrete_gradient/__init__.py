"""Energy-conserving discrete-gradient schemes for holonomic constraints (Leyendecker, Betsch &
Steinmann 2004): Lagrange multipliers, the penalty method and the augmented Lagrange method."""
