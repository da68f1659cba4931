// AlterOpLayout: converts conv2d chains to the blocked NCHW{B}c layout, B derived from
// b = PassOptions::layout_block, the target's f32 vector width (8 for AVX2, 16 for AVX-512).
// Contract:
//   - conv2d (any groups) becomes conv2d_nchwc on NCHW{xb}c
//     data with OIHW{ib}i{ob}o weights (a layout_transform of the weights, which the following
//     FoldConstant evaluates at compile time when they are constants). Blocks, from the channel
//     count n: channel_block(n) = 2b (two vectors: the conv's register tile gets two vector
//     accumulators per output column) when 2b divides n, else the largest divisor of n <= b;
//     padded_block(n) may instead pad n to a multiple of 2b or b (at most 1/16 more for two
//     vectors, else at most 1/4 when n would get a block below one vector: 58 -> 64, 116 -> 128,
//     1000 -> 1008). ob = padded_block(M); xb = the block the input already has, else
//     padded_block(C); ib = xb (depthwise: ib = 1, ob = xb). Every value has one block, fixed by
//     its producer, so consecutive convs agree without transforms. Other grouped convs (ResNeXt,
//     RegNet) take their blocks from the per-group channel counts: ob = channel_block(M/g), xb =
//     the input's block when it divides C/g, else channel_block(C/g) (the input is re-blocked), so
//     that no block straddles two groups; the values that meet a grouped conv's input or result
//     through elementwise ops are never padded and take the group width's block when it is at
//     least b, except a (groups 1) conv result that meets grouped convs only as their input when
//     the group block is one vector and reblocks_to_two_vectors holds (a long reduction, or an odd
//     count of one-vector blocks): it takes two vectors, and the grouped conv re-blocks it in its
//     packing stage (RegNet's 1x1 convs before the grouped 3x3s).
//     A grouped conv whose group output count has no divisor of a vector or more (34 = 2 x 17)
//     pads each group's outputs to a multiple of the vector when that adds at most 1/4 (zero
//     weight rows and bias per group); its NCHW view drops them (reshape, slice, reshape).
//   - padding: a padded value is [N, ceil(C/B), H, W, B] with C logical channels; the weights get
//     zero rows/columns and the bias zeros (a `pad` folded at compile time), a plain input is
//     padded with zeros, and its NCHW view crops (strided_slice). Padding lanes hold zeros after
//     a conv or pool, anything after an elementwise op (0 / 0 is NaN): a conv reading such a value
//     first zeroes them with where(lane mask, x, 0), which FuseOps puts in the producer's epilogue.
//     A concat never joins padded blocks (it goes through NCHW).
//   - pad of a blocked value on H and W only pads the blocks (any mode), so an explicit pad
//     before a pool or conv is no chain border.
//   - elemwise/broadcast ops (bias/residual add, activations, clip, ...) whose output has the
//     4-D shape of a blocked activation among their arguments follow the blocked layout; their
//     other operands are converted: activations of the same shape by layout_transform (or a
//     block-to-block transform), per-channel operands ([C,1,1], [1,C,1,1]) by reshape +
//     layout_transform, operands broadcast along C ([1,1,H,W]) by reshape, scalars unchanged.
//     Constant operands are thus folded by FoldConstant. batch_norm (pattern broadcast, but not
//     numpy broadcasting) never follows; SimplifyInference removes it first.
//   - max_pool2d / avg_pool2d of a blocked value become max_pool2d_nchwc / avg_pool2d_nchwc on the
//     blocks (same block and attributes), so pooling between convs is no chain border; so do
//     global_max_pool / global_avg_pool of a blocked 4-D value (window = the whole H x W), whose
//     blocked [N, C, 1, 1] results broadcast in elementwise ops with blocked activations of the
//     same channels (squeeze-excite: x * sigmoid(conv(conv(pool(x))))) without transforms.
//   - concat on the channels (axis 1) of 4-D values, one of them blocked, concatenates the blocks
//     when one input's block b divides every input's channel count (the largest such b; other
//     inputs are transformed to it): fire/inception modules and dense blocks stay blocked.
//   - layout transforms back to NCHW are inserted only at chain borders: before any other consumer
//     (global pooling, reshape, softmax, ...) and before graph outputs. Each blocked value gets at most one
//     such transform (and each plain value at most one transform per block).
//   - values are exactly those of the original graph (conv2d_nchwc's reference is conv2d's; the
//     transforms move elements).
// Stats: "convs_converted", "convs_padded", "pools_blocked", "concats_blocked", "pads_blocked", "layout_transforms" (transforms of activations in the result: the
// runtime cost), "constant_transforms" (on constants, folded by FoldConstant), "block" (b).
#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <numeric>
#include <unordered_set>

#include "kiln/ir/graph_visitor.h"
#include "kiln/pass/pass.h"
#include "pass/layer_choice_hooks.h"
#include "pass/pass_util.h"

namespace kiln::pass {
namespace {

using ir::Attrs;
using ir::NodePtr;
using ir::Value;

std::string nchwc(int64_t b) { return "NCHW" + std::to_string(b) + "c"; }

int64_t largest_divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t b = std::min(n, limit); b > 1; --b) {
    if (n % b == 0) return b;
  }
  return 1;
}

class LayoutAlterer : public ir::GraphMutator {
 public:
  LayoutAlterer(PassContext& ctx, const ir::Graph& graph)
      : GraphMutator("AlterOpLayout"), ctx_(ctx), block_(ctx.options().layout_block) {
    find_grouped_conv_inputs(graph);
  }

 protected:
  std::vector<Value> rewrite_call(const ir::CallNode& node, const std::vector<Value>& args) override {
    if (&node.op() == conv2d_) {
      if (auto v = rewrite_conv(node, args)) return {*v};
    } else if (const ir::OpDef* blocked = blocked_pool_of(node.op())) {
      if (auto v = rewrite_pool(node, args, *blocked)) return {*v};
    } else if (&node.op() == global_avg_pool_ || &node.op() == global_max_pool_) {
      if (auto v = rewrite_global_pool(node, args)) return {*v};
    } else if (&node.op() == concat_) {
      if (auto v = rewrite_concat(node, args)) return {*v};
    } else if (&node.op() == pad_) {
      if (auto v = rewrite_pad(node, args)) return {*v};
    } else if (node.num_outputs() == 1 && &node.op() != batch_norm_ &&
               node.op().pattern <= ir::OpPattern::kBroadcast) {
      if (auto v = rewrite_elementwise(node, args)) return {*v};
    }
    return rebuild_call(node, args);
  }

 private:
  struct Blocked {
    Value value;  // the NCHW{block}c tensor: [N, ceil(C / block), H, W, block]
    int64_t block;
    // Its lanes past the C logical channels (padding) hold zeros: true for what a conv, or a pool
    // or depthwise conv of such a value, computes (zero weights and bias there); false after an
    // elementwise op (sigmoid(0) = 0.5, and 0 / 0 is NaN), so a conv reading it masks them first.
    bool clean = true;
  };

  // The block of a conv result with `channels` channels when no padding is allowed (grouped
  // convs): two vectors (2 * block_) when they divide it, so the conv's register tile has two
  // vector accumulators per output column (twice the FMAs per broadcast input value of a
  // one-vector block), else the largest divisor <= block_.
  int64_t channel_block(int64_t channels) const {
    if (channels % (2 * block_) == 0) return 2 * block_;
    return largest_divisor_at_most(channels, block_);
  }

  // The block of a conv's output or input (groups 1, or depthwise), which may pad the channels
  // to a multiple of it (the padded weights and bias are zeros): two vectors when they divide
  // the channels or padding to them adds at most 1/16 (1000 -> 1008); one vector when it divides;
  // else two vectors, then one, when padding adds at most 1/4 (ShuffleNet's 58 -> 64 and 116 ->
  // 128, which would otherwise get blocks of 2 and 4 lanes); else channel_block (e.g. 3 for RGB).
  // The padded channel count is always round_up(channels, block).
  int64_t padded_block(int64_t channels) const {
    const int64_t two = 2 * block_;
    const int64_t pad_two = round_up(channels, two) - channels, pad_one = round_up(channels, block_) - channels;
    if (pad_two * 16 <= channels) return two;
    if (pad_one == 0) return block_;
    if (pad_two * 4 <= channels) return two;
    if (pad_one * 4 <= channels) return block_;
    return channel_block(channels);
  }

  static int64_t round_up(int64_t n, int64_t b) { return (n + b - 1) / b * b; }

  // A conv feeding grouped convs takes two-vector blocks (re-blocked by them) only when each of
  // its outputs sums at least this many products (input channels x kernel taps).
  static constexpr int64_t kReblockMinReduction = 256;

  // Whether a (groups 1) conv of `m` outputs that feeds only grouped convs of one-vector group
  // blocks takes two-vector blocks instead (see rewrite_conv), which the grouped conv re-blocks
  // in its packing stage at a cost per element of the result: when its reduction (terms per
  // output) is at least kReblockMinReduction; or, padding m by at most 1/4, when it is at least
  // half that or its one-vector blocks are odd in number. An odd count leaves the register tile
  // one block wide (a tile's blocks divide the count): a weight vector and a broadcast per FMA,
  // load-bound. RegNetY, 1 thread, kernel times per call: 1x1 208 -> 440 at 14x14 (55 blocks of
  // 8) 924 -> 561 us, its grouped conv 173 -> 126-225 us; the stage-2 and stage-3 feeders (13
  // blocks, 104 x 1 taps; 26 blocks, 208) with their grouped convs -10 to -18%. Short
  // reductions with even counts keep one vector (1x1 32 -> 48 at 112x112 ran at 84%).
  bool reblocks_to_two_vectors(int64_t m, int64_t reduction) const {
    const int64_t two = 2 * block_;
    if (reduction >= kReblockMinReduction) return padded_block(m) == two;
    if ((round_up(m, two) - m) * 4 > m) return false;
    const bool odd_blocks = (round_up(m, block_) / block_) % 2 == 1;
    return odd_blocks || 2 * reduction >= kReblockMinReduction;
  }

  // Grouped convs (not depthwise) take blocks inside their groups, which padded channels or a
  // block that does not divide the group width would not match (the input would be re-blocked).
  // So the calls whose results meet such a conv's data or result through elementwise ops (classes of values
  // joined by elementwise ops, e.g. a squeeze-excite scale and the activation it multiplies) get
  // no padding and, when it is at least one vector, the block of the group width (the gcd over
  // all such convs), all alike.
  void find_grouped_conv_inputs(const ir::Graph& graph) {
    std::unordered_map<const ir::Node*, const ir::Node*> parent;
    auto find = [&](const ir::Node* n) {
      while (parent.count(n) && parent[n] != n) n = parent[n];
      return n;
    };
    std::vector<std::pair<const ir::Node*, int64_t>> grouped_inputs;  // (data or result, group width)
    std::vector<const ir::Node*> grouped_results;
    for (const NodePtr& node : graph.topo_order()) {
      if (node->kind() != ir::NodeKind::kCall) continue;
      const ir::CallNode& call = node->as_call();
      const std::vector<Value>& args = call.args();
      if (&call.op() == conv2d_ && !args.empty() && args[0].type().rank() == 4) {
        const int64_t g = call.attrs().get_int("groups"), c = args[0].type().shape[1];
        const int64_t m = call.output_types()[0].shape[1];
        if (g > 1 && c % g == 0 && m % g == 0 && !(g == c && g == m)) {
          grouped_inputs.emplace_back(args[0].node.get(), c / g);
          grouped_inputs.emplace_back(node.get(), m / g);  // its result has blocks of its groups too
          grouped_results.push_back(node.get());
        }
      } else if (call.op().pattern <= ir::OpPattern::kBroadcast && node->num_outputs() == 1) {
        const ir::Shape& out = call.output_types()[0].shape;
        for (const Value& a : args) {
          const ir::Shape& as = a.type().shape;
          if (out.size() == 4 && as.size() == 4 && as[1] == out[1]) parent[find(a.node.get())] = find(node.get());
        }
      }
    }
    std::unordered_map<const ir::Node*, int64_t> width;  // class root -> gcd of the group widths
    for (const auto& [n, cg] : grouped_inputs) {
      int64_t& w = width[find(n)];
      w = std::gcd(w, cg);
    }
    std::unordered_set<const ir::Node*> result_roots;
    for (const ir::Node* n : grouped_results) result_roots.insert(find(n));
    for (const NodePtr& node : graph.topo_order()) {
      auto it = width.find(find(node.get()));
      if (it != width.end()) group_width_[node.get()] = it->second;
      if (result_roots.count(find(node.get()))) joins_grouped_result_.insert(node.get());
    }
  }

  // The blocked source of a to-NCHW transform this pass made.
  const Blocked* blocked_source(const Value& v) const {
    auto it = to_plain_.find(v.node.get());
    return it == to_plain_.end() ? nullptr : &it->second;
  }

  Value transform(const Value& v, const std::string& src, const std::string& dst) {
    return ir::make_call(*layout_transform_, {v}, Attrs().set("src_layout", src).set("dst_layout", dst))->output();
  }

  // `v` (a plain NCHW value, or one of our to-NCHW views) as NCHW{block}c, its channels padded
  // with zeros to round_up(C, block) when the block does not divide them. A blocked value with
  // the same padded size is re-blocked directly; otherwise the plain view is cropped and padded.
  Value as_blocked(const Value& v, int64_t block) {
    const int64_t c = v.type().shape[1], padded = round_up(c, block);
    if (const Blocked* b = blocked_source(v)) {
      if (b->block == block) return b->value;
      if (b->value.type().shape[1] * b->block == padded) {
        return memo(b->value, block, [&] { return transform(b->value, nchwc(b->block), nchwc(block)); });
      }
    }
    return memo(v, block, [&] {
      Value x = v;
      if (padded != c) {
        std::vector<int64_t> pads(8, 0);
        pads[5] = padded - c;  // the end of axis 1
        x = ir::make_call(*pad_, {x}, Attrs().set("pads", pads))->output();
      }
      return transform(x, "NCHW", nchwc(block));
    });
  }

  // True when as_blocked(v, block) carries padding lanes that may hold anything but zeros: `v`
  // is a view of a blocked value that is not clean and as_blocked takes it as it is or re-blocks
  // it directly (the way through NCHW pads with zeros).
  bool unclean(const Value& v, int64_t block) const {
    const Blocked* b = blocked_source(v);
    const int64_t c = v.type().shape[1];
    if (!b || b->clean || c % block == 0) return false;
    return b->block == block || b->value.type().shape[1] * b->block == round_up(c, block);
  }

  // `data` (blocked, with padding lanes past `channels`) with those lanes set to zero: a
  // where() with a constant lane mask, which FuseOps makes part of the producer's epilogue.
  Value zero_padding(const Value& data, int64_t channels) {
    return memo(data, -1, [&] {
      const ir::Shape& s = data.type().shape;
      ir::NDArray mask = ir::NDArray::empty(ir::DType::kBool, {1, s[1], 1, 1, s[4]});
      auto* m = static_cast<uint8_t*>(mask.mutable_raw_data());
      for (int64_t i = 0; i < s[1] * s[4]; ++i) m[i] = i < channels ? 1 : 0;
      ir::NodePtr mask_node = ir::make_constant("padding_mask", std::move(mask));
      ir::NodePtr zero = ir::make_constant("zero", ir::NDArray::scalar(data.type().dtype, 0.0));
      return ir::make_call(*where_, {mask_node->output(), data, zero->output()}, Attrs())->output();
    });
  }

  template <typename Make>
  Value memo(const Value& v, int64_t block, Make make) {
    auto key = std::make_tuple(v.node.get(), v.index, block);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    Value out = make();
    memo_[key] = out;
    keep_.push_back(v.node);  // keeps the key's node alive while the memo refers to it
    return out;
  }

  // A to-NCHW view of a blocked result; unreachable (and so absent) when every user follows the
  // blocked layout.
  // With `channels` below the padded count, the view crops the padding (a strided_slice).
  Value plain_view(const Value& blocked, int64_t block, bool clean = true, int64_t channels = -1) {
    Value v = transform(blocked, nchwc(block), "NCHW");
    if (channels >= 0 && channels != v.type().shape[1]) {
      v = ir::make_call(*strided_slice_, {v},
                        Attrs()
                            .set("begins", std::vector<int64_t>{0})
                            .set("ends", std::vector<int64_t>{channels})
                            .set("axes", std::vector<int64_t>{1}))
              ->output();
    }
    to_plain_[v.node.get()] = {blocked, block, clean};
    keep_.push_back(v.node);
    return v;
  }

  std::optional<Value> rewrite_conv(const ir::CallNode& node, const std::vector<Value>& args) {
    const ir::TensorType& x = args[0].type();
    const ir::TensorType& w = args[1].type();
    if (x.rank() != 4 || w.rank() != 4) return std::nullopt;
    const int64_t c = x.shape[1], m = w.shape[0], groups = node.attrs().get_int("groups");
    const bool depthwise = groups > 1 && groups == c && groups == m;
    const Blocked* in = blocked_source(args[0]);
    int64_t xb = in ? in->block : padded_block(c);
    // Feeding a grouped conv: the group width's block when it is two vectors; when it is one
    // vector, two vectors if this result only feeds grouped convs (it meets no grouped conv's
    // result through elementwise ops) and reblocks_to_two_vectors holds: the grouped conv
    // re-blocks it in its packing stage (FuseOps puts the transform there), which then costs
    // far less than a one-vector register tile here (RegNetY's 1x1 440 -> 440 at 7x7: 46% of
    // peak with 8 lanes, 66-73% with 16; its 1x1 32 -> 48 at 112x112 ran at 84% with 8 lanes and
    // the re-blocking made the grouped conv after it 40% slower); else the group block; below
    // one vector (a block of a few lanes would slow this conv down more than re-blocking costs)
    // the unpadded block of the channels.
    auto width = group_width_.find(&node);
    int64_t ob = depthwise ? xb : padded_block(m);
    if (!depthwise && width != group_width_.end()) {
      const int64_t group_block = channel_block(std::gcd(m, width->second));
      if (group_block < block_) {
        ob = channel_block(m);
      } else if (group_block < 2 * block_ && groups == 1 && !joins_grouped_result_.count(&node) &&
                 reblocks_to_two_vectors(m, w.shape[1] * w.shape[2] * w.shape[3])) {
        ob = 2 * block_;
      } else {
        ob = group_block;
      }
    }
    // Tuning records may settle the output block of a conv no grouped conv constrains
    // (layer_choice_hooks.h); without them, the rule's block above.
    if (!depthwise && groups == 1 && width == group_width_.end()) {
      ob = choose_conv_output_block(ctx_, node, x, w, ob, block_);
    }
    int64_t group_out = 0;  // > 0: each group's outputs padded to this many
    if (groups > 1 && !depthwise) {
      // Grouped: every channel block lies inside one group (blocks divide C/g and M/g), the input
      // block is the weights' ib; an input blocked otherwise (or padded) is re-blocked.
      const int64_t cg = c / groups, mg = m / groups;
      if (cg * groups != c || mg * groups != m) return std::nullopt;
      if (cg % xb != 0) xb = channel_block(cg);
      ob = channel_block(mg);
      // Group widths without a divisor of a vector or more (34 = 2 x 17: 2-lane blocks) get each
      // group's outputs padded to a whole vector when that adds at most 1/4 (34 -> 40): zero
      // weight rows and bias per group, dropped again by the result's NCHW view.
      const int64_t padded_group = round_up(mg, block_);
      if (ob < block_ && (padded_group - mg) * 4 <= mg) {
        group_out = padded_group;
        ob = channel_block(padded_group);
      }
    }
    const int64_t ib = depthwise ? 1 : xb;
    const bool masked = !depthwise && unclean(args[0], xb);
    Value data = as_blocked(args[0], xb);
    if (masked) data = zero_padding(data, c);
    // Padded channels: zero weights (rows of padded outputs, columns of padded inputs) and bias.
    const int64_t cp = data.type().shape[1] * xb;
    const int64_t mp = depthwise ? cp : group_out > 0 ? groups * group_out : round_up(m, ob);
    Value wv = args[1];
    Value bias = args.size() > 2 ? args[2] : Value{};
    if (group_out > 0) {
      wv = pad_each_group(wv, groups, group_out);
      if (bias.defined()) bias = pad_each_group(bias, groups, group_out);
    } else if (mp != m || (!depthwise && cp != c)) {
      std::vector<int64_t> pads(8, 0);
      pads[4] = mp - m;                  // the end of O
      pads[5] = depthwise ? 0 : cp - c;  // the end of I
      wv = ir::make_call(*pad_, {wv}, Attrs().set("pads", pads))->output();
    }
    std::vector<Value> conv_args = {data, transform(wv, "OIHW", "OIHW" + std::to_string(ib) + "i" + std::to_string(ob) + "o")};
    if (bias.defined()) {
      conv_args.push_back(mp == m || group_out > 0
                              ? bias
                              : ir::make_call(*pad_, {bias}, Attrs().set("pads", std::vector<int64_t>{0, mp - m}))->output());
    }
    Attrs attrs = node.attrs();
    if (depthwise) attrs.set("groups", cp);  // one group per (padded) channel
    NodePtr conv = ir::make_call(*conv2d_nchwc_, conv_args, attrs, node.name());
    ++ctx_.stat("convs_converted");
    if (mp != m) ++ctx_.stat("convs_padded");
    if (group_out > 0) return drop_group_padding(conv->output(), ob, groups, m / groups);
    const bool clean = !depthwise || !unclean(args[0], xb);
    return plain_view(conv->output(), ob, clean, m);
  }

  Value reshape(const Value& v, const ir::Shape& shape) {
    return ir::make_call(*reshape_, {v}, Attrs().set("shape", shape))->output();
  }

  // `v` ([groups * n, ...]: weights or bias) with each group's n rows padded with zeros to
  // `padded` rows: [groups, n, rest] padded on axis 1, back to [groups * padded, ...].
  Value pad_each_group(const Value& v, int64_t groups, int64_t padded) {
    const ir::Shape& s = v.type().shape;
    int64_t rest = 1;
    for (size_t d = 1; d < s.size(); ++d) rest *= s[d];
    std::vector<int64_t> pads(6, 0);
    pads[4] = padded - s[0] / groups;  // the end of axis 1
    Value p = ir::make_call(*pad_, {reshape(v, {groups, s[0] / groups, rest})}, Attrs().set("pads", pads))->output();
    ir::Shape out = s;
    out[0] = groups * padded;
    return reshape(p, out);
  }

  // The NCHW view of a grouped conv's blocked result whose groups were padded: the first
  // `per_group` channels of each group.
  Value drop_group_padding(const Value& blocked, int64_t block, int64_t groups, int64_t per_group) {
    const Value v = transform(blocked, nchwc(block), "NCHW");
    const ir::Shape& s = v.type().shape;
    const Value sliced = ir::make_call(*strided_slice_, {reshape(v, {s[0], groups, s[1] / groups, s[2] * s[3]})},
                                      Attrs()
                                          .set("begins", std::vector<int64_t>{0})
                                          .set("ends", std::vector<int64_t>{per_group})
                                          .set("axes", std::vector<int64_t>{2}))
                             ->output();
    return reshape(sliced, {s[0], groups * per_group, s[2], s[3]});
  }

  // The blocked form of a window pooling op (max_pool2d -> max_pool2d_nchwc), or null.
  const ir::OpDef* blocked_pool_of(const ir::OpDef& op) const {
    if (&op == max_pool2d_) return max_pool2d_nchwc_;
    if (&op == avg_pool2d_) return avg_pool2d_nchwc_;
    return nullptr;
  }

  // A pool whose input is blocked pools the blocks (same block, same attributes): no transform
  // before or after it, so conv -> pool -> conv stays one blocked chain.
  std::optional<Value> rewrite_pool(const ir::CallNode& node, const std::vector<Value>& args, const ir::OpDef& blocked) {
    const Blocked* in = blocked_source(args[0]);
    if (!in || node.num_outputs() != 1) return std::nullopt;
    NodePtr pool = ir::make_call(blocked, {in->value}, node.attrs(), node.name());
    ++ctx_.stat("pools_blocked");
    return plain_view(pool->output(), in->block, in->clean, args[0].type().shape[1]);
  }

  // Global pooling of a blocked [N, C, H, W] value is the window pool of the whole H x W on the
  // blocks: its [N, C/b, 1, 1, b] result stays blocked, so squeeze-excite branches (pool -> 1x1
  // convs -> sigmoid -> scale) need no transform.
  std::optional<Value> rewrite_global_pool(const ir::CallNode& node, const std::vector<Value>& args) {
    const Blocked* in = blocked_source(args[0]);
    if (!in || args[0].type().rank() != 4 || node.num_outputs() != 1) return std::nullopt;
    const bool average = &node.op() == global_avg_pool_;
    const ir::Shape& s = args[0].type().shape;
    Attrs attrs = Attrs()
                      .set("kernel", std::vector<int64_t>{s[2], s[3]})
                      .set("strides", std::vector<int64_t>{1, 1})
                      .set("pads", std::vector<int64_t>{0, 0, 0, 0})
                      .set("dilations", std::vector<int64_t>{1, 1})
                      .set("ceil_mode", int64_t{0});
    if (average) attrs.set("count_include_pad", int64_t{0});
    NodePtr pool = ir::make_call(average ? *avg_pool2d_nchwc_ : *max_pool2d_nchwc_, {in->value}, attrs, node.name());
    ++ctx_.stat("pools_blocked");
    return plain_view(pool->output(), in->block, in->clean, s[1]);
  }

  // Concatenation on the channels of a blocked value concatenates the blocks ([N, C_i/b, H, W, b]
  // joined on axis 1) when one block b divides every input's channel count, so inception and fire
  // modules and dense blocks stay one blocked chain. b is the largest block of a blocked input that
  // divides them all; inputs with another block (or plain ones) are transformed to it.
  std::optional<Value> rewrite_concat(const ir::CallNode& node, const std::vector<Value>& args) {
    if (node.num_outputs() != 1 || node.output_types()[0].rank() != 4 || node.attrs().get_int("axis") != 1) {
      return std::nullopt;
    }
    int64_t block = 0;
    for (const auto& a : args) {
      const Blocked* b = blocked_source(a);
      if (!b || b->block <= block) continue;
      bool divides = true;
      for (const auto& x : args) divides = divides && x.type().shape[1] % b->block == 0;
      if (divides) block = b->block;
    }
    if (block == 0) return std::nullopt;
    std::vector<Value> blocked_args;
    for (const auto& a : args) blocked_args.push_back(as_blocked(a, block));
    NodePtr call = ir::make_call(node.op(), blocked_args, node.attrs(), node.name());
    ++ctx_.stat("concats_blocked");
    return plain_view(call->output(), block);
  }

  // A pad of a blocked value along H and W only (Inception's explicit pad before a 3x3 average
  // pool, TF-style "same" padding before a conv) pads the blocks on those axes, in any mode; the
  // padding lanes of the channels take the fill value, so they stay clean only with 0.
  std::optional<Value> rewrite_pad(const ir::CallNode& node, const std::vector<Value>& args) {
    const Blocked* in = blocked_source(args[0]);
    const std::vector<int64_t>& pads = node.attrs().get_ints("pads");
    if (!in || args[0].type().rank() != 4 || pads.size() != 8 || pads[0] != 0 || pads[1] != 0 || pads[4] != 0 ||
        pads[5] != 0) {
      return std::nullopt;
    }
    Attrs attrs = node.attrs();
    attrs.set("pads", std::vector<int64_t>{0, 0, pads[2], pads[3], 0, 0, 0, pads[6], pads[7], 0});
    NodePtr call = ir::make_call(node.op(), {in->value}, attrs, node.name());
    ++ctx_.stat("pads_blocked");
    const bool clean = in->clean && (attrs.get_string("mode") != "constant" || attrs.get_float("value") == 0.0);
    return plain_view(call->output(), in->block, clean, args[0].type().shape[1]);
  }

  std::optional<Value> rewrite_elementwise(const ir::CallNode& node, const std::vector<Value>& args) {
    const ir::Shape& out = node.output_types()[0].shape;
    if (out.size() != 4) return std::nullopt;
    const Blocked* lead = nullptr;
    for (const auto& a : args) {
      const Blocked* b = blocked_source(a);
      if (b && a.type().shape == out) {
        lead = b;
        break;
      }
    }
    if (!lead) return std::nullopt;
    const int64_t block = lead->block, c = out[1];
    std::vector<Value> blocked_args;
    for (const auto& a : args) {
      const ir::Shape& s = a.type().shape;
      if (blocked_source(a) || s == out) {
        // A blocked value of another shape joins when it has the channels and broadcasts along the
        // other axes ([N, C, 1, 1] scales of a squeeze-excite branch); else leave the op alone.
        if (s != out && !(s.size() == 4 && s[1] == c && (s[0] == 1 || s[0] == out[0]) &&
                          (s[2] == 1 || s[2] == out[2]) && (s[3] == 1 || s[3] == out[3]))) {
          return std::nullopt;
        }
        blocked_args.push_back(as_blocked(a, block));
        continue;
      }
      if (a.type().numel() == 1 && s.size() <= 1) {
        blocked_args.push_back(a);  // a scalar broadcasts to the 5-D shape as it is
        continue;
      }
      if (s.size() > 4) return std::nullopt;
      ir::Shape s4(4 - s.size(), 1);
      s4.insert(s4.end(), s.begin(), s.end());
      Value v = s4 == s ? a : ir::make_call(*reshape_, {a}, Attrs().set("shape", s4))->output();
      if (s4[1] == c) {
        blocked_args.push_back(as_blocked(v, block));
      } else if (s4[1] == 1) {
        ir::Shape s5 = {s4[0], 1, s4[2], s4[3], 1};
        blocked_args.push_back(ir::make_call(*reshape_, {v}, Attrs().set("shape", s5))->output());
      } else {
        return std::nullopt;
      }
    }
    NodePtr call = ir::make_call(node.op(), blocked_args, node.attrs(), node.name());
    return plain_view(call->output(), block, c % block == 0, c);
  }

  PassContext& ctx_;
  int64_t block_;
  const ir::OpDef* conv2d_ = op_ptr("conv2d");
  const ir::OpDef* conv2d_nchwc_ = op_ptr("conv2d_nchwc");
  const ir::OpDef* layout_transform_ = op_ptr("layout_transform");
  const ir::OpDef* reshape_ = op_ptr("reshape");
  const ir::OpDef* concat_ = op_ptr("concat");
  const ir::OpDef* pad_ = op_ptr("pad");
  const ir::OpDef* strided_slice_ = op_ptr("strided_slice");
  const ir::OpDef* where_ = op_ptr("where");
  const ir::OpDef* max_pool2d_ = op_ptr("max_pool2d");
  const ir::OpDef* avg_pool2d_ = op_ptr("avg_pool2d");
  const ir::OpDef* max_pool2d_nchwc_ = op_ptr("max_pool2d_nchwc");
  const ir::OpDef* avg_pool2d_nchwc_ = op_ptr("avg_pool2d_nchwc");
  const ir::OpDef* global_avg_pool_ = op_ptr("global_avg_pool");
  const ir::OpDef* global_max_pool_ = op_ptr("global_max_pool");
  const ir::OpDef* batch_norm_ = op_ptr("batch_norm");
  std::unordered_map<const ir::Node*, int64_t> group_width_;  // find_grouped_conv_inputs
  std::unordered_set<const ir::Node*> joins_grouped_result_;    // ... of those, in a grouped conv result's class
  std::unordered_map<const ir::Node*, Blocked> to_plain_;
  std::map<std::tuple<const ir::Node*, int, int64_t>, Value> memo_;
  std::vector<NodePtr> keep_;
};

class AlterOpLayout final : public Pass {
 public:
  const char* name() const override { return "AlterOpLayout"; }
  ir::Graph run(const ir::Graph& graph, PassContext& ctx) const override {
    const ir::OpDef* layout_transform = op_ptr("layout_transform");
    // Transforms of values computed from constants only (weights, biases) are folded at compile
    // time; the others run at inference time.
    auto count = [&](const ir::Graph& g, bool on_constants) {
      std::unordered_map<const ir::Node*, bool> constant_derived;
      int64_t n = 0;
      for (const auto& node : g.topo_order()) {
        bool derived = node->kind() == ir::NodeKind::kConstant;
        if (node->kind() == ir::NodeKind::kCall) {
          derived = true;
          for (const auto& a : node->as_call().args()) derived = derived && constant_derived[a.node.get()];
          if (&node->as_call().op() == layout_transform) n += derived == on_constants ? 1 : 0;
        }
        constant_derived[node.get()] = derived;
      }
      return n;
    };
    ir::Graph out = LayoutAlterer(ctx, graph).mutate(graph);
    if (ctx.stats().count("convs_converted") == 0) return graph;
    ctx.stat("layout_transforms") = count(out, false) - count(graph, false);
    ctx.stat("constant_transforms") = count(out, true) - count(graph, true);
    ctx.stat("block") = ctx.options().layout_block;
    return out;
  }
};

}  // namespace

std::unique_ptr<Pass> make_alter_op_layout() { return std::make_unique<AlterOpLayout>(); }

}  // namespace kiln::pass
