"""The JSON Schemas of docs/schema/ by name ("job", "launch", "serve-job", ...), each validated with the others
resolvable: a schema refers to another by its file name ("$ref": "job.schema.json"), resolved against the $id
https://frenzy.invalid/schema/. Works with jsonschema 4.10 (Debian 12's python3-jsonschema: RefResolver with a
store) and 4.18+ (a referencing.Registry). Used by tests/schema/check_schemas.py and tests/slurm/test_serve.py."""
import glob
import json
import os

import jsonschema

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "schema")


class Schemas:
    def __init__(self, schema_dir=SCHEMA_DIR):
        self.by_name = {os.path.basename(p).removesuffix(".schema.json"): json.load(open(p))
                        for p in sorted(glob.glob(os.path.join(schema_dir, "*.schema.json")))}
        self.by_id = {s["$id"]: s for s in self.by_name.values()}
        self._validators = {}
        self._registry = None
        try:
            from referencing import Registry, Resource
            registry = Registry().with_resources((i, Resource.from_contents(s)) for i, s in self.by_id.items())
            jsonschema.Draft202012Validator({}, registry=registry)  # jsonschema < 4.18 takes no registry
            self._registry = registry
        except (ImportError, TypeError):
            pass

    def validator(self, name):
        if name not in self._validators:
            s = self.by_name[name]
            if self._registry is not None:
                v = jsonschema.Draft202012Validator(s, registry=self._registry)
            else:
                v = jsonschema.Draft202012Validator(s, resolver=jsonschema.RefResolver.from_schema(s, store=self.by_id))
            self._validators[name] = v
        return self._validators[name]

    def errors(self, name, doc):
        """Every way `doc` breaks docs/schema/NAME.schema.json."""
        return list(self.validator(name).iter_errors(doc))

    def validate(self, name, doc):
        """Raises jsonschema.ValidationError unless `doc` conforms; returns it."""
        self.validator(name).validate(doc)
        return doc
