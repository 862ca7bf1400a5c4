"""GGL-stabilised schemes in embedded coordinates (Kinon, Betsch & Schneider 2023): the variational
Euler scheme VI-S, the θ-families VI-A and VI-B, and the energy–momentum schemes EM and EM-G."""
