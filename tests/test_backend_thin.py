"""The adapter interface stays thin: :class:`~gpubench.backends.base.Backend` declares
little itself, the static facts of every backend are one frozen record, and the hooks
beyond the adapter live behind objects of their own. A fact or a hook added back onto
the class one at a time would grow it past what a framework author can read at once."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest

from gpubench.backends import Backend, Facts, backend_classes
from gpubench.backends.hooks import DeviceCeilings, MultiDevice, PinnedStaging

#: the most the class body of Backend may declare
MAX_ATTRIBUTES, MAX_METHODS = 15, 25


def own_members(cls: type) -> tuple[list[str], list[str]]:
    """(data attributes, methods) that the body of ``cls`` itself declares, private ones
    included: methods are functions, class and static methods and properties; data
    attributes are the rest, and names only annotated."""
    methods, attributes = [], []
    for name, value in vars(cls).items():
        if name.startswith("__") and name.endswith("__"):
            continue
        kind = (classmethod, staticmethod, property)
        (methods if inspect.isfunction(value) or isinstance(value, kind)
         else attributes).append(name)
    attributes += [n for n in inspect.get_annotations(cls) if n not in vars(cls)]
    return attributes, methods


def test_the_counting_sees_every_kind_of_member() -> None:
    class Sample:
        a = 1
        _b: int = 2
        c: str

        def f(self) -> None: ...

        @classmethod
        def g(cls) -> None: ...

        @staticmethod
        def _h() -> None: ...

        @property
        def p(self) -> int:
            return 0

    attributes, methods = own_members(Sample)
    assert sorted(attributes) == ["_b", "a", "c"]
    assert sorted(methods) == ["_h", "f", "g", "p"]


def test_backend_declares_few_attributes_and_methods() -> None:
    attributes, methods = own_members(Backend)
    assert len(attributes) <= MAX_ATTRIBUTES, sorted(attributes)
    assert len(methods) <= MAX_METHODS, sorted(methods)


def test_no_static_fact_is_a_class_attribute_of_backend() -> None:
    """Each fact has one home, the record: none is also an attribute of the class."""
    fields = {f.name for f in dataclasses.fields(Facts)}
    assert not fields & set(vars(Backend))


def test_facts_are_frozen_and_their_mappings_read_only() -> None:
    facts = Facts(compile_cache_vars={"A_CACHE_DIR": "a"}, compiling=frozenset({"x"}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        facts.timer = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        facts.compile_cache_vars["B_CACHE_DIR"] = "b"  # type: ignore[index]
    assert facts.uses_compile_cache("x") and not facts.uses_compile_cache("y")
    assert Facts().uses_compile_cache("y")  # None: any implementation may compile
    derived = facts.but(timer="cuda_event")
    assert (derived.timer, facts.timer) == ("cuda_event", "perf_counter")
    assert derived.compile_cache_vars == {"A_CACHE_DIR": "a"}


def test_facts_travel_to_another_process() -> None:
    """A started backend whose instance holds its own facts (Numba's simulator) pickles
    and deep-copies with them, read-only mappings and all."""
    facts = Facts(compile_cache_vars={"A_CACHE_DIR": "a"}, timer="perf_counter+sync")
    for copied in (pickle.loads(pickle.dumps(facts)), copy.deepcopy(facts)):
        assert copied == facts and type(copied) is Facts
        with pytest.raises(TypeError):
            copied.compile_cache_vars["B_CACHE_DIR"] = "b"  # type: ignore[index]


@pytest.mark.parametrize("backend", list(backend_classes()))
def test_every_backend_has_a_frozen_facts_record_and_hook_objects(backend: str) -> None:
    cls = backend_classes()[backend]
    assert isinstance(cls.facts, Facts), backend
    assert dataclasses.is_dataclass(cls.facts)
    assert type(cls.facts).__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert issubclass(cls.multi, MultiDevice)
    assert issubclass(cls.ceilings, DeviceCeilings)
    assert issubclass(cls.staging_type, PinnedStaging)
    # a several-device mode the facts name is one the hooks build
    assert set(cls.facts.multi_device) <= set(cls.multi.steps())
