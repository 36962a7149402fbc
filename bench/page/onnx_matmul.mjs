// A one-node ONNX model, C = MatMul(A, B) on f32 of fixed shapes, written as protobuf bytes by
// hand so the page needs no ONNX tooling. Field numbers are those of onnx/onnx.proto.
export function matmulModel(shapeA, shapeB, shapeC) {
  const varint = (n) => {
    const out = [];
    for (; n > 127; n = Math.floor(n / 128)) out.push((n % 128) | 128);
    return [...out, n];
  };
  const int = (field, n) => [field << 3, ...varint(n)];  // wire type 0
  const bytes = (field, body) => [(field << 3) | 2, ...varint(body.length), ...body];  // type 2
  const str = (field, s) => bytes(field, [...new TextEncoder().encode(s)]);
  const FLOAT = 1;  // TensorProto.DataType
  const valueInfo = (name, shape) => [
    ...str(1, name),                                          // ValueInfoProto.name
    ...bytes(2, bytes(1, [                                    // .type.tensor_type
      ...int(1, FLOAT),                                       //   .elem_type
      ...bytes(2, shape.flatMap((d) => bytes(1, int(1, d)))), //   .shape.dim[].dim_value
    ])),
  ];
  const node = [...str(1, "A"), ...str(1, "B"), ...str(2, "C"), ...str(4, "MatMul")];
  const graph = [
    ...bytes(1, node), ...str(2, "matmul"),                   // GraphProto.node, .name
    ...bytes(11, valueInfo("A", shapeA)), ...bytes(11, valueInfo("B", shapeB)),  // .input
    ...bytes(12, valueInfo("C", shapeC)),                     // .output
  ];
  return new Uint8Array([
    ...int(1, 8),                                             // ModelProto.ir_version
    ...bytes(8, int(2, 13)),                                  // .opset_import: default domain, 13
    ...bytes(7, graph),                                       // .graph
  ]);
}
