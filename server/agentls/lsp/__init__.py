"""The LSP front end: a pygls server that maps agent/* requests onto sessions."""
