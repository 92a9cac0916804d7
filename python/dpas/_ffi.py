"""ctypes mirror of include/dpas/dpas.h: finds libdpas, declares the structs and functions the
binding uses, and checks every mirrored struct's size against the library's own (dpas_sizeof)."""
import ctypes
import ctypes.util
import os

c_u64, c_i64, c_char_p, c_void_p = ctypes.c_uint64, ctypes.c_int64, ctypes.c_char_p, ctypes.c_void_p


class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("line", ctypes.c_int), ("column", ctypes.c_int),
                ("field", ctypes.c_char * 64), ("message", ctypes.c_char * 512)]


class Rational(ctypes.Structure):
    _fields_ = [("num", c_u64), ("den", c_u64)]


class Bytes(ctypes.Structure):
    _fields_ = [("whole", c_u64), ("frac_num", c_u64), ("frac_den", c_u64)]


class Scenario(ctypes.Structure):
    _fields_ = [("workload", c_char_p), ("parameters", c_u64), ("fleet", c_char_p),
                ("nodes", c_i64), ("accelerators_per_node", c_i64), ("dp_degree", c_i64),
                ("gradient_bytes_per_param", Rational), ("checkpoint_bytes_per_param", Rational),
                ("weight_bytes_per_param", Rational), ("fleet_entry", c_void_p),
                ("node_entry", c_void_p), ("fabric_entry", c_void_p)]


class Report(ctypes.Structure):
    _fields_ = [("accelerators", c_i64), ("nodes", c_i64), ("accelerators_per_node", c_i64),
                ("accelerators_per_replica", ctypes.c_double), ("gradient_bytes", Bytes),
                ("checkpoint_bytes", Bytes), ("weight_bytes", Bytes),
                ("allreduce_factor", ctypes.c_double), ("gather_factor", c_i64),
                ("gather_traffic_ratio", ctypes.c_double), ("undefined", ctypes.c_uint),
                ("warnings", ctypes.c_uint)]


class Value(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("i", c_i64), ("r", ctypes.c_double), ("bytes", Bytes)]


class Model(ctypes.Structure):
    _fields_ = [("path", c_char_p), ("name", c_char_p), ("display", c_char_p), ("parameters", c_u64),
                ("active_parameters", c_u64), ("missing", c_char_p), ("notes", c_char_p),
                ("source", c_char_p)]


class Hardware(ctypes.Structure):
    _fields_ = [("path", c_char_p), ("name", c_char_p), ("display", c_char_p), ("memory", Bytes),
                ("peak_flops", ctypes.c_double), ("hbm_bandwidth", ctypes.c_double),
                ("nvlink_bandwidth", ctypes.c_double), ("tdp_watts", ctypes.c_double),
                ("source", c_char_p)]


class Node(ctypes.Structure):
    _fields_ = [("path", c_char_p), ("name", c_char_p), ("display", c_char_p),
                ("accelerator", ctypes.POINTER(Hardware)), ("accelerators_per_node", c_i64),
                ("intra_bandwidth", ctypes.c_double), ("intra_latency", ctypes.c_double),
                ("source", c_char_p)]


class Fabric(ctypes.Structure):
    _fields_ = [("path", c_char_p), ("name", c_char_p), ("display", c_char_p),
                ("bandwidth", ctypes.c_double), ("latency", ctypes.c_double), ("topology", c_char_p),
                ("oversubscription", ctypes.c_double), ("source", c_char_p)]


class Fleet(ctypes.Structure):
    _fields_ = [("path", c_char_p), ("name", c_char_p), ("display", c_char_p),
                ("node", ctypes.POINTER(Node)), ("count", c_i64), ("fabric", ctypes.POINTER(Fabric)),
                ("source", c_char_p)]


class NamedScenario(ctypes.Structure):
    _fields_ = [("path", c_char_p), ("name", c_char_p), ("display", c_char_p), ("scenario", Scenario),
                ("workload_entry", ctypes.POINTER(Model)), ("notes", c_char_p), ("source", c_char_p)]


class RenderOpts(ctypes.Structure):
    _fields_ = [("format", ctypes.c_int), ("units", ctypes.c_int), ("explain", ctypes.c_int),
                ("attrs", ctypes.c_uint), ("label", c_char_p)]


class CostOpts(ctypes.Structure):
    _fields_ = [("rules", c_void_p), ("nrules", ctypes.c_size_t), ("schedules", ctypes.c_uint),
                ("iterations", c_i64), ("steps", c_i64), ("f", c_i64), ("compute_rate", ctypes.c_double),
                ("all", ctypes.c_int), ("format", ctypes.c_int), ("units", ctypes.c_int),
                ("label", c_char_p), ("links", c_void_p), ("links_source", c_char_p)]


KINDS = {"model": (0, Model), "hardware": (1, Hardware), "node": (2, Node), "fabric": (3, Fabric),
         "fleet": (4, Fleet), "scenario": (5, NamedScenario)}


def _candidates():
    """Where libdpas may be: DPAS_LIBRARY (a file), DPAS_LIBRARY_DIR, the install-time record,
    the build tree next to this package, the system's search path."""
    env = os.environ.get("DPAS_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    d = os.environ.get("DPAS_LIBRARY_DIR")
    if d:
        yield os.path.join(d, "libdpas.so")
    try:
        from . import _config  # written by cmake --install
        yield os.path.join(_config.LIBDIR, "libdpas.so")
    except ImportError:
        pass
    root = os.path.dirname(os.path.dirname(here))
    for b in ("build", "build-asan"):
        yield os.path.join(root, b, "libdpas.so")
    found = ctypes.util.find_library("dpas")
    if found:
        yield found


def load():
    tried = []
    for path in _candidates():
        if path and (os.path.exists(path) or "/" not in path):
            try:
                lib = ctypes.CDLL(path)
                break
            except OSError as e:
                tried.append(f"{path}: {e}")
        else:
            tried.append(f"{path}: no such file")
    else:
        raise ImportError("dpas: cannot find libdpas.so (build it with 'make', or set DPAS_LIBRARY "
                          "to its path); tried: " + "; ".join(tried))
    _declare(lib)
    _check_layout(lib)
    return lib


def _declare(lib):
    E = ctypes.POINTER(Error)
    sig = {
        "dpas_sizeof": (ctypes.c_size_t, [c_char_p]),
        "dpas_version": (c_char_p, []),
        "dpas_strerror": (c_char_p, [ctypes.c_int]),
        "dpas_registry_builtin": (ctypes.c_int, [ctypes.POINTER(c_void_p), E]),
        "dpas_registry_free": (None, [c_void_p]),
        "dpas_registry_count": (ctypes.c_size_t, [c_void_p, ctypes.c_int]),
        "dpas_registry_at": (c_void_p, [c_void_p, ctypes.c_int, ctypes.c_size_t]),
        "dpas_registry_find": (ctypes.c_int, [c_void_p, ctypes.c_int, c_char_p, ctypes.POINTER(c_void_p), E]),
        "dpas_spec_new": (c_void_p, []),
        "dpas_spec_free": (None, [c_void_p]),
        "dpas_spec_set": (ctypes.c_int, [c_void_p, c_char_p, c_char_p, c_char_p, E]),
        "dpas_spec_resolve": (ctypes.c_int, [c_void_p, c_void_p, ctypes.POINTER(Scenario), E]),
        "dpas_spec_label": (c_char_p, [c_void_p]),
        "dpas_evaluate": (ctypes.c_int, [ctypes.POINTER(Scenario), ctypes.POINTER(Report), E]),
        "dpas_report_get": (ctypes.c_int, [ctypes.POINTER(Report), ctypes.c_int, ctypes.POINTER(Value), E]),
        "dpas_attr_name": (c_char_p, [ctypes.c_int]),
        "dpas_attr_unit": (c_char_p, [ctypes.c_int]),
        "dpas_parse_width": (ctypes.c_int, [c_char_p, c_char_p, ctypes.POINTER(Rational), E]),
        "dpas_render_report": (c_void_p, [ctypes.POINTER(Scenario), ctypes.POINTER(Report),
                                          ctypes.POINTER(RenderOpts), E]),
        "dpas_render_rules": (c_void_p, [c_i64, c_i64, c_char_p, ctypes.c_int, E]),
        "dpas_render_cost": (c_void_p, [ctypes.POINTER(Scenario), ctypes.POINTER(CostOpts), E]),
        "dpas_render_inventory": (c_void_p, [ctypes.POINTER(Scenario), ctypes.c_int, ctypes.c_int,
                                             c_char_p, E]),
        "dpas_rule_select": (ctypes.c_int, [c_char_p, c_char_p, ctypes.POINTER(c_void_p), E]),
        "dpas_free": (None, [c_void_p]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args


def _check_layout(lib):
    for name, cls in (("dpas_error", Error), ("dpas_rational", Rational), ("dpas_bytes", Bytes),
                      ("dpas_scenario", Scenario), ("dpas_report", Report), ("dpas_value", Value),
                      ("dpas_model", Model), ("dpas_hardware", Hardware), ("dpas_node", Node),
                      ("dpas_fabric", Fabric), ("dpas_fleet", Fleet),
                      ("dpas_named_scenario", NamedScenario), ("dpas_render_opts", RenderOpts),
                      ("dpas_cost_opts", CostOpts)):
        want = lib.dpas_sizeof(name.encode())
        if want != ctypes.sizeof(cls):
            raise ImportError(f"dpas: the Python mirror of {name} has {ctypes.sizeof(cls)} bytes, "
                              f"the library's {want}: binding and library do not match")


def take_string(lib, ptr):
    """A char * the caller owns (renderers): copy it to str and free it."""
    if not ptr:
        return None
    try:
        return ctypes.string_at(ptr).decode("utf-8")
    finally:
        lib.dpas_free(ptr)


# ---- the aggregation kernels and attacks (include/dpas/kernels.h) ----------------------------

class AggOpts(ctypes.Structure):
    _fields_ = [("f", c_i64), ("m", c_i64), ("iterations", c_i64), ("tau", ctypes.c_double),
                ("generic", ctypes.c_int), ("threads", ctypes.c_int), ("nnm", ctypes.c_int),
                ("isa", ctypes.c_int), ("tolerance", ctypes.c_double), ("smoothing", ctypes.c_double)]


class AttackOpts(ctypes.Structure):
    _fields_ = [("parameter", ctypes.c_double), ("has_parameter", ctypes.c_int)]


class Rule(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("name", c_char_p), ("display", c_char_p),
                ("convention", c_char_p), ("is_default", ctypes.c_int), ("a", ctypes.c_int),
                ("b", ctypes.c_int), ("condition", c_char_p), ("compute", c_char_p),
                ("caps", ctypes.c_uint), ("neighbour_drop", ctypes.c_int), ("neighbours", c_char_p),
                ("source", c_char_p), ("notes", c_char_p)]


class Attack(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("name", c_char_p), ("parameter", c_char_p),
                ("source", c_char_p), ("notes", c_char_p)]


def declare_kernels(lib):
    """Declare the kernel functions and check the kernel structs' mirrors (once per library)."""
    if getattr(lib, "_dpas_kernels_declared", False):
        return
    E = ctypes.POINTER(Error)
    rows = ctypes.POINTER(c_void_p)
    sig = {
        "dpas_aggregate": (ctypes.c_int, [c_void_p, rows, ctypes.c_size_t, ctypes.c_size_t,
                                          ctypes.POINTER(AggOpts), c_void_p, ctypes.POINTER(c_i64),
                                          ctypes.POINTER(ctypes.c_size_t), E]),
        "dpas_attack_find": (ctypes.c_int, [c_char_p, ctypes.POINTER(c_void_p), E]),
        "dpas_attack_rows": (ctypes.c_int, [c_void_p, rows, ctypes.c_size_t, ctypes.c_size_t,
                                            ctypes.c_size_t, ctypes.POINTER(AttackOpts), rows, E]),
        "dpas_kernels_sizeof": (ctypes.c_size_t, [c_char_p]),
        "dpas_kernel_isa": (c_char_p, []),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    for name, cls, size_of in (("dpas_agg_opts", AggOpts, lib.dpas_kernels_sizeof),
                               ("dpas_attack_opts", AttackOpts, lib.dpas_kernels_sizeof),
                               ("dpas_attack", Attack, lib.dpas_kernels_sizeof),
                               ("dpas_rule", Rule, lib.dpas_sizeof)):
        want = size_of(name.encode())
        if want != ctypes.sizeof(cls):
            raise ImportError(f"dpas: the Python mirror of {name} has {ctypes.sizeof(cls)} bytes, "
                              f"the library's {want}: binding and library do not match")
    lib._dpas_kernels_declared = True
