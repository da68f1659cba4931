// The runtime side: _Module (a loaded artifact: kiln_module_load) and aligned_empty.
//
// Contract of _Module.run(arrays) (python/kiln/module.py normalizes the caller's inputs first:
// a list of numpy arrays in input order):
//   - a non-C-contiguous array is copied into a C-contiguous one first;
//   - each array's dtype and shape must equal the input's, else a UserError naming the input
//     (bfloat16, which numpy lacks, is exchanged as uint16 arrays of bit patterns both ways);
//   - an array whose data is 64-byte aligned is bound zero-copy (kiln_executor_bind_input); any
//     other is copied into the executor's own buffer (kiln_executor_set_input);
//   - the outputs are numpy arrays viewing the executor's output buffers (zero-copy, writable, so
//     they export through __dlpack__). They keep that executor out of the module's pool until the
//     last of them is released, so a later run never overwrites them: it takes another executor
//     (made on demand; at most kMaxIdle idle ones are kept). An output that views a bound input's
//     memory is copied, so outputs never alias the caller's inputs;
//   - the GIL is released while setting inputs and running: Python threads run one module (or
//     several) at once, each run on its own executor.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "binding.h"
#include "kiln/ir/tensor_type.h"
#include "kiln/runtime/kiln_runtime.hpp"
#include "kiln/support/error.h"

namespace kiln::python {
namespace {

namespace rt = kiln::runtime;

struct Spec {
  std::string name;
  DLDataType dtype;
  std::vector<int64_t> shape;
};

// The numpy dtype of a spec's tensors (uint16 for bfloat16), made once: building a py::dtype from
// a format string goes through numpy's Python-level parser (microseconds per call).
py::dtype numpy_dtype_for(const Spec& s, const std::string& what);

bool same_dtype(const DLDataType& a, const DLDataType& b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

// numpy has no bfloat16: such tensors are exchanged as uint16 arrays of their bit patterns.
bool is_bfloat16(const DLDataType& d) { return d.code == kDLBfloat && d.bits == 16 && d.lanes == 1; }

std::string shape_text(const std::vector<int64_t>& s) { return ir::shape_to_string(ir::Shape(s.begin(), s.end())); }

// A loaded artifact and its pool of idle executors (shared by every run and every live output).
class ModuleState {
 public:
  static constexpr size_t kMaxIdle = 4;

  explicit ModuleState(const std::string& path) : path_(path), module_(rt::Module::load(path)) {
    for (int32_t i = 0; i < module_.num_inputs(); ++i) inputs_.push_back(spec(module_.input_info(i)));
    for (int32_t i = 0; i < module_.num_outputs(); ++i) outputs_.push_back(spec(module_.output_info(i)));
  }
  const std::string& path() const { return path_; }
  const std::vector<Spec>& inputs() const { return inputs_; }
  const std::vector<Spec>& outputs() const { return outputs_; }

  std::unique_ptr<rt::Executor> acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        auto e = std::move(idle_.back());
        idle_.pop_back();
        return e;
      }
    }
    return std::make_unique<rt::Executor>(module_);
  }
  void release(std::unique_ptr<rt::Executor> e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.size() < kMaxIdle) idle_.push_back(std::move(e));
  }

 private:
  static Spec spec(const KilnTensorInfo& info) {
    return Spec{info.name, info.dtype, std::vector<int64_t>(info.shape, info.shape + info.ndim)};
  }
  std::string path_;
  rt::Module module_;
  std::vector<Spec> inputs_, outputs_;
  std::mutex mu_;
  std::vector<std::unique_ptr<rt::Executor>> idle_;
};

// One executor checked out of the pool; goes back when the last output viewing it is released.
struct Lease {
  std::shared_ptr<ModuleState> state;
  std::unique_ptr<rt::Executor> executor;
  ~Lease() {
    if (executor) state->release(std::move(executor));
  }
};

// The caller's inputs, checked against the module's specs, as DLTensors over their memory.
struct PreparedInputs {
  std::vector<py::array> keep;  // the arrays, alive for the call
  std::vector<DLTensor> tensors;
  std::vector<bool> zero_copy;
};

PreparedInputs prepare_inputs(const ModuleState& state, const std::vector<py::dtype>& expected,
                              const std::vector<py::array>& arrays) {
  const auto& specs = state.inputs();
  if (arrays.size() != specs.size()) {
    std::string names;
    for (const Spec& s : specs) names += (names.empty() ? "'" : ", '") + s.name + "'";
    throw UserError(UserErrorKind::kInvalidArgument, "Module.run",
                    "got " + std::to_string(arrays.size()) + " input(s), the model has " + std::to_string(specs.size()) +
                        " (" + names + ")",
                    "pass a dict {name: array} with every input");
  }
  PreparedInputs p;
  p.keep = arrays;
  p.tensors.resize(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (!(p.keep[i].flags() & py::array::c_style)) {  // the copy rule: made C-contiguous first
      p.keep[i] = py::array::ensure(p.keep[i], py::array::c_style);
    }
    const py::array& a = p.keep[i];
    const Spec& s = specs[i];
    if (!a.dtype().equal(expected[i])) {  // fast path first; the checks below name the problem
      const std::string what = "input '" + s.name + "'";
      DLDataType dl = dl_dtype_of(a.dtype(), what);
      throw UserError(UserErrorKind::kInvalidArgument, what,
                      "has dtype " + dtype_name(dl) + ", the model expects " + dtype_name(s.dtype),
                      is_bfloat16(s.dtype) ? "pass the bfloat16 bit patterns as a numpy.uint16 array"
                                           : "convert it, e.g. x.astype(numpy." + dtype_name(s.dtype) + ")");
    }
    if (a.ndim() != static_cast<py::ssize_t>(s.shape.size()) ||
        !std::equal(s.shape.begin(), s.shape.end(), a.shape())) {
      const std::string what = "input '" + s.name + "'";
      std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
      throw UserError(UserErrorKind::kInvalidArgument, what,
                      "has shape " + shape_text(shape) + ", the model expects " + shape_text(s.shape),
                      "artifacts have static shapes: recompile with input_shapes={'" + s.name + "': [...]} for another");
    }
    KILN_ICHECK(a.flags() & py::array::c_style) << "input '" << s.name << "' is still non-contiguous";
    DLTensor& t = p.tensors[i];
    t.data = const_cast<void*>(a.data());
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int32_t>(s.shape.size());
    t.dtype = s.dtype;
    t.shape = const_cast<int64_t*>(s.shape.data());
    t.strides = nullptr;
    t.byte_offset = 0;
    p.zero_copy.push_back(a.size() > 0 && reinterpret_cast<uintptr_t>(t.data) % KILN_TENSOR_ALIGNMENT == 0);
  }
  return p;
}

// Sets every input of `e` (bound zero-copy or copied). GIL released by the caller.
void set_inputs(rt::Executor& e, const PreparedInputs& p) {
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    if (p.zero_copy[i]) {
      e.bind_input(static_cast<int32_t>(i), p.tensors[i]);
    } else {
      e.set_input(static_cast<int32_t>(i), p.tensors[i]);
    }
  }
}

bool views_bound_input(const DLTensor& out, size_t nbytes, const PreparedInputs& p) {
  const auto* lo = static_cast<const char*>(out.data) + out.byte_offset;
  for (size_t i = 0; i < p.keep.size(); ++i) {
    if (!p.zero_copy[i]) continue;
    const auto* b = static_cast<const char*>(p.tensors[i].data);
    if (lo < b + p.keep[i].nbytes() && b < lo + nbytes) return true;
  }
  return false;
}

class PyModule {
 public:
  explicit PyModule(const std::string& path) {
    {
      py::gil_scoped_release release;
      state_ = std::make_shared<ModuleState>(path);
    }
    for (const Spec& s : state_->inputs()) input_dtypes_.push_back(numpy_dtype_for(s, "input '" + s.name + "'"));
    for (const Spec& s : state_->outputs()) output_dtypes_.push_back(numpy_dtype_for(s, "output '" + s.name + "'"));
  }

  py::list infos(bool inputs) const {
    py::list out;
    for (const Spec& s : inputs ? state_->inputs() : state_->outputs()) {
      out.append(py::make_tuple(s.name, dtype_name(s.dtype), py::tuple(py::cast(s.shape))));
    }
    return out;
  }

  py::list run(const std::vector<py::array>& arrays) {
    PreparedInputs p = prepare_inputs(*state_, input_dtypes_, arrays);
    auto lease = std::make_shared<Lease>();
    lease->state = state_;
    {
      py::gil_scoped_release release;
      lease->executor = state_->acquire();
      set_inputs(*lease->executor, p);
      lease->executor->run();
    }
    last_zero_copy_ = p.zero_copy;
    py::capsule owner(new std::shared_ptr<Lease>(lease),
                      [](void* q) { delete static_cast<std::shared_ptr<Lease>*>(q); });
    py::list outs;
    const auto& specs = state_->outputs();
    for (size_t o = 0; o < specs.size(); ++o) {
      const DLTensor& v = lease->executor->output(static_cast<int32_t>(o));
      std::vector<py::ssize_t> shape(v.shape, v.shape + v.ndim);
      void* data = static_cast<char*>(v.data) + v.byte_offset;
      py::array a(output_dtypes_[o], shape, {}, data, owner);
      if (views_bound_input(v, static_cast<size_t>(a.nbytes()), p)) a = py::array(a.attr("copy")());
      outs.append(a);
    }
    return outs;
  }

  py::tuple profile(const std::vector<py::array>& arrays, int repeat) {
    std::vector<KilnKernelProfile> rows;
    std::string report;
    repeated_runs("Module.profile", arrays, repeat, [](rt::Executor& e) { e.set_profiling(true); },
                  [&](rt::Executor& e) {
                    for (int32_t k = 0; k < e.num_kernels(); ++k) rows.push_back(e.kernel_profile(k));
                    report = e.profile_report();
                    e.set_profiling(false);
                  });
    py::list out;
    for (const KilnKernelProfile& k : rows) {
      py::dict row;
      row["symbol"] = k.symbol;
      row["fused_ops"] = k.fused_ops;
      row["calls"] = k.calls / repeat;
      row["seconds"] = k.total_seconds / repeat;
      out.append(row);
    }
    return py::make_tuple(out, report);
  }

  // Runs `repeat` times with the tracer on; the Chrome trace-event JSON of those runs.
  std::string trace(const std::vector<py::array>& arrays, int repeat) {
    std::string json;
    repeated_runs("Module.trace", arrays, repeat, [](rt::Executor& e) { e.set_tracing(true); },
                  [&](rt::Executor& e) {
                    json = e.trace_json("kiln: " + state_->path());
                    e.set_tracing(false);
                  });
    return json;
  }

  const std::string& path() const { return state_->path(); }
  py::list last_zero_copy() const { return py::cast(last_zero_copy_); }

 private:
  // `repeat` runs of `arrays` on a leased executor without the GIL: `before` switches a
  // measurement on, `after` reads it and switches it off (Module.profile, Module.trace).
  void repeated_runs(const char* what, const std::vector<py::array>& arrays, int repeat,
                     const std::function<void(rt::Executor&)>& before, const std::function<void(rt::Executor&)>& after) {
    if (repeat < 1) {
      throw UserError(UserErrorKind::kInvalidArgument, what, "repeat must be >= 1, got " + std::to_string(repeat));
    }
    PreparedInputs p = prepare_inputs(*state_, input_dtypes_, arrays);
    Lease lease;
    lease.state = state_;
    py::gil_scoped_release release;
    lease.executor = state_->acquire();
    rt::Executor& e = *lease.executor;
    before(e);
    set_inputs(e, p);
    for (int r = 0; r < repeat; ++r) e.run();
    after(e);
  }

  std::shared_ptr<ModuleState> state_;
  std::vector<py::dtype> input_dtypes_, output_dtypes_;
  std::vector<bool> last_zero_copy_;
};

py::dtype numpy_dtype_for(const Spec& s, const std::string& what) {
  return is_bfloat16(s.dtype) ? py::dtype("H") : numpy_dtype_of(s.dtype, what);
}

// A C-contiguous numpy array over kiln_tensor_alloc memory (64-byte aligned, zero-filled).
py::array aligned_empty(const std::vector<int64_t>& shape, const py::dtype& dtype) {
  const DLDataType dl = dl_dtype_of(dtype, "kiln.empty");
  DLTensor* t = nullptr;
  rt::check(kiln_tensor_alloc(shape.data(), static_cast<int32_t>(shape.size()), dl, &t));
  py::capsule owner(t, [](void* q) { kiln_tensor_free(static_cast<DLTensor*>(q)); });
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  return py::array(dtype, dims, {}, t->data, owner);
}

}  // namespace

void bind_runtime(py::module_& m) {
  py::class_<PyModule>(m, "_Module")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def_property_readonly("path", &PyModule::path)
      .def("input_infos", [](const PyModule& self) { return self.infos(true); })
      .def("output_infos", [](const PyModule& self) { return self.infos(false); })
      .def("run", &PyModule::run, py::arg("arrays"))
      .def("profile", &PyModule::profile, py::arg("arrays"), py::arg("repeat"))
      .def("trace", &PyModule::trace, py::arg("arrays"), py::arg("repeat"))
      .def("last_zero_copy", &PyModule::last_zero_copy);
  m.def("aligned_empty", &aligned_empty, py::arg("shape"), py::arg("dtype"));
}

}  // namespace kiln::python
