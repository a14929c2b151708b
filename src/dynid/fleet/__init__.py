"""Fleet work: identify many recordings (batch, on Dask) and keep a registry of the runs."""
