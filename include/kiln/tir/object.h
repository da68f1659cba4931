// Intrusively ref-counted, immutable objects: the storage of every loop-IR node, buffer, tensor
// operation and schedule-free value in kiln::tir.
//
// Ref<T> holds a `const Object*`, so a Ref to a forward-declared type can be declared, copied and
// destroyed; only dereferencing needs the complete type. Identity (`same_as`) is pointer identity.
#ifndef KILN_TIR_OBJECT_H_
#define KILN_TIR_OBJECT_H_

#include <atomic>
#include <cstdint>
#include <utility>

namespace kiln::tir {

class Object {
 public:
  Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  virtual ~Object() = default;

  void incref() const { ref_count_.fetch_add(1, std::memory_order_relaxed); }
  void decref() const {
    if (ref_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  mutable std::atomic<int32_t> ref_count_{0};
};

template <typename T>
class Ref {
 public:
  Ref() = default;
  Ref(const T* node) : obj_(node) {  // NOLINT: implicit from a node pointer, as Halide does
    if (obj_) obj_->incref();
  }
  Ref(const Ref& other) : obj_(other.obj_) {
    if (obj_) obj_->incref();
  }
  Ref(Ref&& other) noexcept : obj_(std::exchange(other.obj_, nullptr)) {}
  Ref& operator=(Ref other) noexcept {
    std::swap(obj_, other.obj_);
    return *this;
  }
  ~Ref() {
    if (obj_) obj_->decref();
  }

  bool defined() const { return obj_ != nullptr; }
  const T* get() const { return static_cast<const T*>(obj_); }
  const T* operator->() const { return get(); }
  const T& operator*() const { return *get(); }
  bool same_as(const Ref& other) const { return obj_ == other.obj_; }
  const Object* object() const { return obj_; }

 protected:
  const Object* obj_ = nullptr;
};

}  // namespace kiln::tir

#endif  // KILN_TIR_OBJECT_H_
