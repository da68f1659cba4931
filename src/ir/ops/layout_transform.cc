// `layout_transform`: moves a tensor between two layouts with the same primal axes (layout.h), e.g.
// NCHW <-> NCHW8c, NCHW8c -> NCHW16c, OIHW -> OIHW8i8o (conv weights for conv2d_nchwc). Each output
// element is one input element: pattern injective, any dtype. Attributes: src_layout, dst_layout.
// Each block must divide its axis (no padding).
#include <algorithm>
#include <cstring>

#include "ir/ops/layout.h"
#include "ir/ops/op_util.h"

namespace kiln::ir::ops {

int64_t Layout::block_of(char axis) const {
  for (const auto& d : dims) {
    if (d.axis == axis && d.factor > 0) return d.factor;
  }
  return 1;
}

bool Layout::has_axis(char axis) const {
  for (const auto& d : dims) {
    if (d.axis == axis && d.factor == 0) return true;
  }
  return false;
}

Layout parse_layout(const std::string& text, const std::string& op, const std::string& attr) {
  Layout layout;
  layout.text = text;
  auto bad = [&](const std::string& why) {
    fail_attr(op, attr, "is \"" + text + "\": " + why, "write layouts like \"NCHW\", \"NCHW8c\" or \"OIHW8i8o\"");
  };
  if (text.empty()) bad("empty");
  size_t i = 0;
  while (i < text.size()) {
    int64_t factor = 0;
    const size_t digits = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      factor = factor * 10 + (text[i] - '0');
      if (factor > (int64_t{1} << 31)) bad("block factor too large");
      ++i;
    }
    if (i == text.size()) bad("ends with a number");
    const char c = text[i++];
    const bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z';
    if (!upper && !lower) bad(std::string("'") + c + "' is not a letter");
    if (upper && i - 1 != digits) bad(std::string("primal axis '") + c + "' has a number before it");
    if (lower && i - 1 == digits) bad(std::string("block '") + c + "' needs its size before it, e.g. 8" + c);
    if (lower && factor < 1) bad(std::string("block '") + c + "' has size 0");
    const char axis = upper ? c : static_cast<char>(c - 'a' + 'A');
    for (const auto& d : layout.dims) {
      if (d.axis == axis && (d.factor == 0) == upper) bad(std::string("axis '") + c + "' appears twice");
    }
    layout.dims.push_back({axis, upper ? 0 : factor});
  }
  for (const auto& d : layout.dims) {
    if (d.factor > 0 && !layout.has_axis(d.axis)) {
      bad(std::string("block of '") + static_cast<char>(d.axis - 'A' + 'a') + "' without its primal axis '" +
          d.axis + "'");
    }
  }
  return layout;
}

namespace {

constexpr const char* kOp = "layout_transform";

// Primal extents (index: letter - 'A') of a tensor of `shape` in `layout`.
std::vector<int64_t> primal_sizes(const Shape& shape, const Layout& layout) {
  std::vector<int64_t> sizes(26, 0);
  for (size_t i = 0; i < layout.dims.size(); ++i) {
    if (layout.dims[i].factor == 0) sizes[layout.dims[i].axis - 'A'] = shape[i] * layout.block_of(layout.dims[i].axis);
  }
  return sizes;
}

}  // namespace

Shape convert_layout_shape(const Shape& shape, const Layout& src, const Layout& dst, const std::string& op) {
  if (shape.size() != src.dims.size()) {
    fail_input(op, 0, "x",
               "has shape " + shape_to_string(shape) + ", which does not have the rank of layout \"" + src.text + "\"");
  }
  for (size_t i = 0; i < src.dims.size(); ++i) {
    if (src.dims[i].factor > 0 && shape[i] != src.dims[i].factor) {
      fail_input(op, 0, "x",
                 "has shape " + shape_to_string(shape) + ": dimension " + std::to_string(i) + " must be " +
                     std::to_string(src.dims[i].factor) + " in layout \"" + src.text + "\"");
    }
  }
  for (const auto& d : src.dims) {
    if (d.factor == 0 && !dst.has_axis(d.axis)) {
      fail_attr(op, "dst_layout", "is \"" + dst.text + "\", which lacks axis '" + d.axis + "' of \"" + src.text + "\"");
    }
  }
  for (const auto& d : dst.dims) {
    if (d.factor == 0 && !src.has_axis(d.axis)) {
      fail_attr(op, "dst_layout", "is \"" + dst.text + "\", whose axis '" + d.axis + "' is not in \"" + src.text + "\"");
    }
  }
  const std::vector<int64_t> sizes = primal_sizes(shape, src);
  Shape out;
  for (const auto& d : dst.dims) {
    const int64_t size = sizes[d.axis - 'A'];
    const int64_t block = dst.block_of(d.axis);
    if (size % block != 0) {
      fail_attr(op, "dst_layout",
                "is \"" + dst.text + "\": the block " + std::to_string(block) + " does not divide axis '" + d.axis +
                    "' of size " + std::to_string(size),
                "choose a block that divides the axis");
    }
    out.push_back(d.factor == 0 ? size / block : d.factor);
  }
  return out;
}

NDArray convert_layout(const NDArray& in, const Layout& src, const Layout& dst) {
  const Shape out_shape = convert_layout_shape(in.shape(), src, dst, kOp);
  NDArray out = NDArray::empty(in.dtype(), out_shape);
  const size_t esize = dtype_size(in.dtype());
  const std::vector<int64_t> src_strides = contiguous_strides(in.shape());
  const std::vector<int64_t> sizes = primal_sizes(in.shape(), src);
  // One slot per primal axis; offsets[slot][p]: the source element offset contributed by primal
  // coordinate p of that axis (its outer and inner source dimensions together).
  std::vector<char> axes;
  std::vector<std::vector<int64_t>> offsets;
  for (const auto& d : src.dims) {
    if (d.factor != 0) continue;
    axes.push_back(d.axis);
    const int64_t bs = src.block_of(d.axis);
    std::vector<int64_t> table(static_cast<size_t>(sizes[d.axis - 'A']), 0);
    for (size_t k = 0; k < src.dims.size(); ++k) {
      if (src.dims[k].axis != d.axis) continue;
      for (int64_t p = 0; p < static_cast<int64_t>(table.size()); ++p) {
        table[p] += (src.dims[k].factor == 0 ? p / bs : p % bs) * src_strides[k];
      }
    }
    offsets.push_back(std::move(table));
  }
  const int rank = static_cast<int>(out_shape.size());
  std::vector<int> slot(rank);
  std::vector<int64_t> mult(rank);
  for (int d = 0; d < rank; ++d) {
    slot[d] = static_cast<int>(std::find(axes.begin(), axes.end(), dst.dims[d].axis) - axes.begin());
    mult[d] = dst.dims[d].factor == 0 ? dst.block_of(dst.dims[d].axis) : 1;
  }
  std::vector<int64_t> counter(rank, 0), primal(axes.size());
  const auto* from = static_cast<const uint8_t*>(in.raw_data());
  auto* to = static_cast<uint8_t*>(out.mutable_raw_data());
  const int64_t total = out.numel();
  for (int64_t i = 0; i < total; ++i) {
    std::fill(primal.begin(), primal.end(), 0);
    for (int d = 0; d < rank; ++d) primal[slot[d]] += counter[d] * mult[d];
    int64_t offset = 0;
    for (size_t a = 0; a < axes.size(); ++a) offset += offsets[a][primal[a]];
    std::memcpy(to + i * esize, from + offset * esize, esize);
    for (int d = rank - 1; d >= 0; --d) {
      if (++counter[d] < out_shape[d]) break;
      counter[d] = 0;
    }
  }
  return out;
}

std::string nchwc_layout(int64_t block) { return "NCHW" + std::to_string(block) + "c"; }

KILN_REGISTER_OP(layout_transform) {
  OpDef d;
  d.name = kOp;
  d.doc = "moves a tensor between layouts with the same primal axes (NCHW <-> NCHW8c, OIHW -> OIHW8i8o)";
  d.attrs = {{"src_layout", AttrKind::kString, std::nullopt, "layout of the input, e.g. \"NCHW\""},
             {"dst_layout", AttrKind::kString, std::nullopt, "layout of the output, e.g. \"NCHW8c\""}};
  d.infer_type = [](const std::vector<TensorType>& in, const Attrs& attrs) {
    const Layout src = parse_layout(attrs.get_string("src_layout"), kOp, "src_layout");
    const Layout dst = parse_layout(attrs.get_string("dst_layout"), kOp, "dst_layout");
    return std::vector<TensorType>{{in[0].dtype, convert_layout_shape(in[0].shape, src, dst, kOp)}};
  };
  d.reference = [](const std::vector<NDArray>& in, const Attrs& attrs, const std::vector<TensorType>&) {
    const Layout src = parse_layout(attrs.get_string("src_layout"), kOp, "src_layout");
    const Layout dst = parse_layout(attrs.get_string("dst_layout"), kOp, "dst_layout");
    return std::vector<NDArray>{convert_layout(in[0], src, dst)};
  };
  d.pattern = OpPattern::kInjective;
  return with_arity_check(std::move(d));
}

}  // namespace kiln::ir::ops
