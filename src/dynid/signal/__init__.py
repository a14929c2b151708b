"""Signal conditioning: filtering, differentiation, velocity gating (spec/identification.md §3)."""
