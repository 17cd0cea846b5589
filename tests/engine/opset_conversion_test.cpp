// Lathe's own opset converter (engine/frontend/onnx/version_upgrade.h) and the check that
// every attribute is honoured or refused: the old forms come out in their opset-17 form
// with the same meaning, and what cannot be converted is refused by node, op and reason.
// (tests/oracle/old_forms compares the converted models' results with ONNX Runtime.)
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/graph/printer.h"
#include "engine/support/diagnostics.h"
#include "engine/support/temporary_folder.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

namespace lathe {
namespace {

namespace fs = std::filesystem;

// A one-op model at `opset` with input x (rank 4, every dim symbolic, so that nothing in
// the conversion can lean on shapes) and the node's outputs as graph outputs.
struct OldModel {
  onnx::ModelProto proto;
  onnx::NodeProto* node;

  OldModel(const std::string& op, std::int64_t opset, int outputs = 1, int outputRank = 4) {
    proto.set_ir_version(opset < 9 ? 3 : opset < 18 ? 4 : 10);
    auto* imp = proto.add_opset_import();
    imp->set_domain("");
    imp->set_version(opset);
    auto* g = proto.mutable_graph();
    g->set_name("old_" + op);
    auto* x = g->add_input();
    x->set_name("x");
    auto* tt = x->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int i = 0; i < 4; ++i)
      tt->mutable_shape()->add_dim()->set_dim_param("d" + std::to_string(i));
    node = g->add_node();
    node->set_op_type(op);
    node->set_name(op + "_node");
    node->add_input("x");
    for (int i = 0; i < outputs; ++i) {
      const std::string name = "y" + std::to_string(i);
      node->add_output(name);
      auto* y = g->add_output();
      y->set_name(name);
      auto* ytt = y->mutable_type()->mutable_tensor_type();
      ytt->set_elem_type(onnx::TensorProto::FLOAT);
      for (int d = 0; d < outputRank; ++d) // the checker wants a shape
        ytt->mutable_shape()->add_dim()->set_dim_param(name + "_" + std::to_string(d));
    }
  }
  onnx::AttributeProto* attr(const std::string& name, onnx::AttributeProto::AttributeType type) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(type);
    return a;
  }
  void setFloat(const std::string& name, float v) {
    attr(name, onnx::AttributeProto::FLOAT)->set_f(v);
  }
  void setInt(const std::string& name, std::int64_t v) {
    attr(name, onnx::AttributeProto::INT)->set_i(v);
  }
  void setInts(const std::string& name, std::initializer_list<std::int64_t> v) {
    auto* a = attr(name, onnx::AttributeProto::INTS);
    for (std::int64_t i : v)
      a->add_ints(i);
  }
  std::string write() const {
    // A private folder per process: ctest runs the tests of this file side by side, and
    // several write a model of the same name.
    static const TemporaryFolder folder("lathe_opset_conversion");
    const fs::path& dir = folder.path();
    const std::string path = (dir / (proto.graph().name() + ".onnx")).string();
    std::ofstream(path, std::ios::binary) << proto.SerializeAsString();
    return path;
  }
  std::string importedIr() const {
    auto r = frontend::importOnnxFile(write());
    EXPECT_EQ(r.graph->opsetVersion, 17);
    return graph::printGraph(*r.graph, {-1});
  }
  Error refusal() const {
    try {
      frontend::importOnnxFile(write());
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << proto.graph().name() << " imported although it must be refused";
    return Error(ErrorKind::Internal, "no error");
  }
};

void expectContains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in:\n" << text;
}

TEST(OpsetConversion, Clip6AttributesBecomeInputs) {
  OldModel m("Clip", 9);
  m.setFloat("min", -0.5f);
  m.setFloat("max", 0.25f);
  const std::string ir = m.importedIr();
  expectContains(ir, "f32[] = Constant() {value = tensor<f32[]> [-0.5]}");
  expectContains(ir, "f32[] = Constant() {value = tensor<f32[]> [0.25]}");
  expectContains(ir, "= Clip(%x, %\"y0/lathe_min\", %\"y0/lathe_max\")");
}

TEST(OpsetConversion, Clip6DefaultsAreTheFloatRange) {
  OldModel m("Clip", 7);
  m.setFloat("max", 6.0f);
  const std::string ir = m.importedIr();
  expectContains(ir, "tensor<f32[]> [-3.4028235e+38]");
  expectContains(ir, "tensor<f32[]> [6.0]");
}

TEST(OpsetConversion, SoftmaxBefore13CoercesToRows) {
  OldModel m("Softmax", 9); // axis 1 by default, on a rank-4 input
  const std::string ir = m.importedIr();
  expectContains(ir, "= Flatten(%x) {axis = 1}");
  expectContains(ir, "= Softmax(%\"y0/lathe_rows\") {axis = 1}");
  expectContains(ir, "= Shape(%x)");
  expectContains(ir, "= Reshape(%\"y0/lathe_rows_out\", %\"y0/lathe_shape\")");
}

TEST(OpsetConversion, HardmaxAtTheLastAxisStaysOneNode) {
  OldModel m("Hardmax", 11);
  m.setInt("axis", -1);
  const std::string ir = m.importedIr();
  expectContains(ir, "= Hardmax(%x) {axis = -1}");
  EXPECT_EQ(ir.find("Flatten"), std::string::npos) << ir;
}

TEST(OpsetConversion, AxesAttributesBecomeInputs) {
  OldModel sq("Squeeze", 11);
  sq.setInts("axes", {0, -1});
  expectContains(sq.importedIr(), "i64[2] = Constant() {value = tensor<i64[2]> [0, -1]}");
  OldModel rs("ReduceSum", 9);
  rs.setInts("axes", {1});
  rs.setInt("keepdims", 0);
  expectContains(rs.importedIr(), "= ReduceSum(%x, %\"y0/lathe_axes\") {keepdims = 0}");
  OldModel sl("Slice", 9);
  sl.setInts("starts", {1});
  sl.setInts("ends", {3});
  sl.setInts("axes", {2});
  expectContains(sl.importedIr(),
                 "= Slice(%x, %\"y0/lathe_starts\", %\"y0/lathe_ends\", %\"y0/lathe_axes\")");
}

TEST(OpsetConversion, Pad2AttributesBecomeInputs) {
  OldModel m("Pad", 9);
  m.setInts("pads", {0, 0, 1, 2, 0, 0, 2, 1});
  m.setFloat("value", 1.5f);
  const std::string ir = m.importedIr();
  expectContains(ir, "tensor<i64[8]> [0, 0, 1, 2, 0, 0, 2, 1]");
  expectContains(ir, "= Pad(%x, %\"y0/lathe_pads\", %\"y0/lathe_value\")");
}

TEST(OpsetConversion, TopK1KBecomesAnInput) {
  OldModel m("TopK", 9, 2);
  m.setInt("k", 3);
  expectContains(m.importedIr(), "i64[1] = Constant() {value = tensor<i64[1]> [3]}");
}

TEST(OpsetConversion, UnchangedStepsKeepTheNode) {
  OldModel m("Relu", 7);
  const std::string ir = m.importedIr();
  expectContains(ir, "= Relu(%x) @Relu_node");
  EXPECT_EQ(ir.find("lathe_"), std::string::npos) << ir;
}

TEST(OpsetConversion, BatchNormalizationPerActivationIsRefused) {
  OldModel m("BatchNormalization", 7);
  for (const char* in : {"scale", "bias", "mean", "var"}) {
    m.node->add_input(in);
    auto* vi = m.proto.mutable_graph()->add_input();
    vi->set_name(in);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_param("c");
  }
  m.setInt("spatial", 0);
  const Error e = m.refusal();
  EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
  EXPECT_EQ(e.where().node, "BatchNormalization_node");
  EXPECT_EQ(e.where().op, "BatchNormalization");
  expectContains(e.reason(), "spatial = 0");
  expectContains(e.reason(), "the model's opset is 7; Lathe runs it as 17");
}

TEST(OpsetConversion, DropoutMaskOfTheInputTypeIsRefused) {
  OldModel m("Dropout", 7, 2);
  m.setFloat("ratio", 0.3f);
  const Error e = m.refusal();
  expectContains(e.reason(), "mask output of Dropout-7");
}

TEST(OpsetConversion, UnusedDropoutMaskIsDropped) {
  OldModel m("Dropout", 10, 2);
  m.proto.mutable_graph()->mutable_output()->RemoveLast();
  m.setFloat("ratio", 0.3f);
  const std::string ir = m.importedIr();
  expectContains(ir, "= Dropout(%x)");
  EXPECT_EQ(ir.find("ratio"), std::string::npos) << ir;
}

TEST(OpsetConversion, OneHot9NegativeIndicesStayOutOfRange) {
  OldModel m("OneHot", 9, 1, 5);
  m.node->add_input("depth");
  m.node->add_input("values");
  for (const char* in : {"depth", "values"}) {
    auto* vi = m.proto.mutable_graph()->add_input();
    vi->set_name(in);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(std::string(in) == "depth" ? 1 : 2);
  }
  const std::string ir = m.importedIr();
  expectContains(ir, "= Less(%x, %\"y0/lathe_zero\")");
  expectContains(ir, "= Where(%\"y0/lathe_negative\", %\"y0/lathe_depth\", %x)");
  expectContains(ir, "= OneHot(%\"y0/lathe_indices\", %depth, %values)");
}

TEST(OpsetConversion, UnreadAttributeAwayFromItsDefaultIsRefused) {
  OldModel m("Constant", 17, 1, 1);
  m.proto.mutable_graph()->mutable_node(0)->clear_input();
  m.proto.mutable_graph()->mutable_input()->Clear();
  m.attr("value_strings", onnx::AttributeProto::STRINGS)->add_strings("hello");
  const Error e = m.refusal();
  EXPECT_EQ(e.where().op, "Constant");
  expectContains(e.reason(),
                 "Constant-13 attribute 'value_strings' is not supported (string tensors)");
}

TEST(OpsetConversion, InertAttributesAreAccepted) {
  OldModel m("Dropout", 13);
  m.setInt("seed", 42);
  expectContains(m.importedIr(), "= Dropout(%x) {seed = 42}");
}

TEST(OpsetConversion, NewerOpsetsComeDownTo17) {
  OldModel m("Gelu", 20);
  m.attr("approximate", onnx::AttributeProto::STRING)->set_s("tanh");
  const std::string ir = m.importedIr();
  expectContains(ir, "= Tanh(");
  expectContains(
      ir, "%y0: f32[y0_0,y0_1,y0_2,y0_3] = Mul(%\"y0/lathe_half_x\", %\"y0/lathe_one_plus\")");
}

TEST(OpsetConversion, ReduceAxesFromARuntimeInputAreRefused) {
  OldModel m("ReduceMean", 18);
  m.node->add_input("axes");
  auto* vi = m.proto.mutable_graph()->add_input();
  vi->set_name("axes");
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::INT64);
  tt->mutable_shape()->add_dim()->set_dim_value(1);
  const Error e = m.refusal();
  EXPECT_EQ(e.where().op, "ReduceMean");
  expectContains(e.reason(), "ReduceMean-18 with axes computed at run time is not supported");
  expectContains(e.reason(), "the model's opset is 18; Lathe runs it as 17");
}

TEST(OpsetConversion, NewAttributesAwayFromTheirDefaultsAreRefused) {
  OldModel resize("Resize", 19);
  resize.node->add_input("");
  resize.node->add_input("scales");
  auto* scales = resize.proto.mutable_graph()->add_initializer();
  scales->set_name("scales");
  scales->set_data_type(onnx::TensorProto::FLOAT);
  scales->add_dims(4);
  for (float f : {1.0f, 1.0f, 0.5f, 0.5f})
    scales->add_float_data(f);
  resize.setInt("antialias", 1);
  expectContains(resize.refusal().reason(),
                 "Resize-18 attribute 'antialias' = 1 (antialiased downsampling) is not supported");
  OldModel pad("Pad", 19);
  pad.node->add_input("pads");
  auto* pads = pad.proto.mutable_graph()->add_initializer();
  pads->set_name("pads");
  pads->set_data_type(onnx::TensorProto::INT64);
  pads->add_dims(8);
  for (int i = 0; i < 8; ++i)
    pads->add_int64_data(1);
  pad.attr("mode", onnx::AttributeProto::STRING)->set_s("wrap");
  expectContains(pad.refusal().reason(), "Pad-19 mode 'wrap' is not supported");
}

TEST(OpsetConversion, OpsAddedAfter17AreRefusedByName) {
  OldModel m("GroupNormalization", 18);
  const Error e = m.refusal();
  EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
  expectContains(e.reason(), "op 'GroupNormalization' is not supported");
}

} // namespace
} // namespace lathe
