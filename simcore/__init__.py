"""simcore: a vehicle simulation core in numpy with PhysX Vehicle2 architecture and equations."""
