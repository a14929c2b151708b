"""Signal conditioning: time-base repair, filtering, differentiation, velocity gating (spec/identification.md §3)."""
