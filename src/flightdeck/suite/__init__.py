"""Suite records, repositories, citations: what a suite is made of."""
