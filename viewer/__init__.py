"""pvdkit viewer: a PySide6 + pyqtgraph desktop viewer for OmniPVD recordings."""
