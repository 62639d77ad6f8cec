"""The edge to files: editor buffers first, then disk; writes through an EditSink."""
