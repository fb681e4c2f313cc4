"""What pages share: the page API (page), the Altair builders (charts), the registry, widgets/ and models/."""
