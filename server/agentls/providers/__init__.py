"""Model providers behind one `Provider` protocol; each SDK is imported only when used."""
