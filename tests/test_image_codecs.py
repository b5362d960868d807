"""Image codecs against TF: the PNG/BMP/GIF files below were written by TF's ``encode_png`` or
by an independent encoder, and the expected arrays are what TF 2.21's ``tf.io.decode_*``
returned for them (pasted as literals)."""
import zlib

import numpy as np
import pytest

import minitf as tf


# fmt: off
# tf_rgb8
PNG_TF_RGB8 = bytes.fromhex('89504e470d0a1a0a0000000d49484452000000040000000308020000003b9639910000003049444154089963382faa6ba377f6de542e89d03c960ba9626fccdf6be564c61c13649631ecf49dcb5974c1685b1a030022710e90a6fe2fe70000000049454e44ae426082')
TF_RGB8_C0 = np.array([[[207, 21, 45], [60, 46, 205], [222, 149, 10], [24, 85, 110]], [[159, 122, 67], [40, 177, 188], [8, 29, 115], [100, 227, 132]], [[107, 110, 170], [150, 44, 188], [193, 244, 201], [72, 81, 166]]], np.uint8)
# tf_ga16
PNG_TF_GA16 = bytes.fromhex('89504e470d0a1a0a0000000d494844520000000300000002100400000067ed72d200000023494441540899635856b7c9fa5ebbd7fb0f410c898cc21b7e9adcfb146c60c4c2f21700a4f40bceb5e000c70000000049454e44ae426082')
TF_GA16_C0 = np.array([[[42622, 45627], [56967, 19183], [61522, 97]], [[5040, 63796], [61858, 19556], [9126, 20577]]], np.uint16)
# pal4_trns
PNG_PAL4_TRNS = bytes.fromhex('89504e470d0a1a0a0000000d4948445200000005000000030403000000a918d8cb00000012504c54450be4a9953e7830c5790741b4855f40179ba958e782590000000374524e530080ffecf7b3180000001449444154789c63300d3460347ca8c7f458fe0100128703dc50f2b63e0000000049454e44ae426082')
PAL4_TRNS_C0 = np.array([[[7, 65, 180, 255], [23, 155, 169, 255], [23, 155, 169, 255], [149, 62, 120, 128], [7, 65, 180, 255]], [[7, 65, 180, 255], [149, 62, 120, 128], [149, 62, 120, 128], [48, 197, 121, 255], [133, 95, 64, 255]], [[149, 62, 120, 128], [133, 95, 64, 255], [7, 65, 180, 255], [149, 62, 120, 128], [48, 197, 121, 255]]], np.uint8)
PAL4_TRNS_C1 = np.array([[[60], [117], [117], [94], [60]], [[60], [94], [94], [143], [102]], [[94], [102], [60], [94], [143]]], np.uint8)
PAL4_TRNS_C3 = np.array([[[7, 65, 180], [23, 155, 169], [23, 155, 169], [149, 62, 120], [7, 65, 180]], [[7, 65, 180], [149, 62, 120], [149, 62, 120], [48, 197, 121], [133, 95, 64]], [[149, 62, 120], [133, 95, 64], [7, 65, 180], [149, 62, 120], [48, 197, 121]]], np.uint8)
PAL4_TRNS_C4 = np.array([[[7, 65, 180, 255], [23, 155, 169, 255], [23, 155, 169, 255], [149, 62, 120, 128], [7, 65, 180, 255]], [[7, 65, 180, 255], [149, 62, 120, 128], [149, 62, 120, 128], [48, 197, 121, 255], [133, 95, 64, 255]], [[149, 62, 120, 128], [133, 95, 64, 255], [7, 65, 180, 255], [149, 62, 120, 128], [48, 197, 121, 255]]], np.uint8)
# pal4
PNG_PAL4 = bytes.fromhex('89504e470d0a1a0a0000000d4948445200000005000000030403000000a918d8cb00000012504c54450be4a9953e7830c5790741b4855f40179ba958e782590000001449444154789c63300d3460347ca8c7f458fe0100128703dc50f2b63e0000000049454e44ae426082')
PAL4_C0 = np.array([[[7, 65, 180], [23, 155, 169], [23, 155, 169], [149, 62, 120], [7, 65, 180]], [[7, 65, 180], [149, 62, 120], [149, 62, 120], [48, 197, 121], [133, 95, 64]], [[149, 62, 120], [133, 95, 64], [7, 65, 180], [149, 62, 120], [48, 197, 121]]], np.uint8)

# gray1
PNG_GRAY1 = bytes.fromhex('89504e470d0a1a0a0000000d494844520000000b0000000401000000007081f85e0000001449444154789c63789dc0e867c4f4e201f37f66001bda049c0ea684d90000000049454e44ae426082')
GRAY1_C0 = np.array([[[255], [255], [255], [0], [255], [0], [255], [255], [0], [255], [255]], [[0], [255], [0], [0], [255], [255], [255], [0], [255], [0], [0]], [[0], [0], [255], [255], [0], [255], [255], [0], [0], [255], [255]], [[0], [0], [0], [255], [255], [0], [255], [0], [0], [255], [0]]], np.uint8)
GRAY1_C3 = np.array([[[255, 255, 255], [255, 255, 255], [255, 255, 255], [0, 0, 0], [255, 255, 255], [0, 0, 0], [255, 255, 255], [255, 255, 255], [0, 0, 0], [255, 255, 255], [255, 255, 255]], [[0, 0, 0], [255, 255, 255], [0, 0, 0], [0, 0, 0], [255, 255, 255], [255, 255, 255], [255, 255, 255], [0, 0, 0], [255, 255, 255], [0, 0, 0], [0, 0, 0]], [[0, 0, 0], [0, 0, 0], [255, 255, 255], [255, 255, 255], [0, 0, 0], [255, 255, 255], [255, 255, 255], [0, 0, 0], [0, 0, 0], [255, 255, 255], [255, 255, 255]], [[0, 0, 0], [0, 0, 0], [0, 0, 0], [255, 255, 255], [255, 255, 255], [0, 0, 0], [255, 255, 255], [0, 0, 0], [0, 0, 0], [255, 255, 255], [0, 0, 0]]], np.uint8)
GRAY1_U16 = np.array([[[65535], [65535], [65535], [0], [65535], [0], [65535], [65535], [0], [65535], [65535]], [[0], [65535], [0], [0], [65535], [65535], [65535], [0], [65535], [0], [0]], [[0], [0], [65535], [65535], [0], [65535], [65535], [0], [0], [65535], [65535]], [[0], [0], [0], [65535], [65535], [0], [65535], [0], [0], [65535], [0]]], np.uint16)
# gray2_trns
PNG_GRAY2_TRNS = bytes.fromhex('89504e470d0a1a0a0000000d494844520000000500000003020000000034ed82850000000274524e530002989dac140000001149444154789c63b87d80d1dd92e907030010640317d3807f4b0000000049454e44ae426082')
GRAY2_TRNS_C0 = np.array([[[255], [85], [170], [255], [255]], [[85], [0], [85], [255], [170]], [[0], [255], [255], [255], [170]]], np.uint8)
GRAY2_TRNS_C4 = np.array([[[255, 255, 255, 255], [85, 85, 85, 255], [170, 170, 170, 0], [255, 255, 255, 255], [255, 255, 255, 255]], [[85, 85, 85, 255], [0, 0, 0, 255], [85, 85, 85, 255], [255, 255, 255, 255], [170, 170, 170, 0]], [[0, 0, 0, 255], [255, 255, 255, 255], [255, 255, 255, 255], [255, 255, 255, 255], [170, 170, 170, 0]]], np.uint8)
# rgb16_trns
PNG_RGB16_TRNS = bytes.fromhex('89504e470d0a1a0a0000000d49484452000000040000000310020000006b06e5d20000000674524e5300007530ea60ff0fc8910000003649444154789c63606028357895f02a014442582091520346062880088070f705b105dd179840b220e1ee0b201d0c0cdd1740bc520300941618d746c2000c0000000049454e44ae426082')
RGB16_TRNS_C0 = np.array([[[0, 117, 234], [234, 117, 234], [117, 234, 234], [0, 117, 117]], [[0, 0, 0], [0, 234, 0], [117, 234, 117], [0, 0, 0]], [[117, 117, 0], [234, 117, 234], [234, 234, 0], [0, 234, 117]]], np.uint8)
RGB16_TRNS_C1 = np.array([[[95], [165], [199], [82]], [[0], [137], [185], [0]], [[103], [165], [207], [150]]], np.uint8)
RGB16_TRNS_C4 = np.array([[[0, 117, 234, 0], [234, 117, 234, 255], [117, 234, 234, 255], [0, 117, 117, 255]], [[0, 0, 0, 255], [0, 234, 0, 255], [117, 234, 117, 255], [0, 0, 0, 255]], [[117, 117, 0, 255], [234, 117, 234, 255], [234, 234, 0, 255], [0, 234, 117, 255]]], np.uint8)
RGB16_TRNS_U16C4 = np.array([[[0, 30000, 60000, 0], [60000, 30000, 60000, 65535], [30000, 60000, 60000, 65535], [0, 30000, 30000, 65535]], [[0, 0, 0, 65535], [0, 60000, 0, 65535], [30000, 60000, 30000, 65535], [0, 0, 0, 65535]], [[30000, 30000, 0, 65535], [60000, 30000, 60000, 65535], [60000, 60000, 0, 65535], [0, 60000, 30000, 65535]]], np.uint16)
# rgb8
PNG_RGB8 = bytes.fromhex('89504e470d0a1a0a0000000d4948445200000006000000020802000000f43f3a090000003149444154789c012600d9ff004d4d4d0d4baea25e289616abcdab10854d8e01ae3209d06c176eddd79d3fcff6aae4863add229c11802ec41fab0000000049454e44ae426082')
RGB8_C1 = np.array([[[77], [67], [108], [77], [163], [101]], [[82], [134], [170], [172], [116], [109]]], np.uint8)
RGB8_U16 = np.array([[[19789, 19789, 19789], [3341, 19275, 44718], [41634, 24158, 10280], [38550, 5654, 43947], [52685, 43947, 4112], [34181, 19789, 36494]], [[44718, 12850, 2313], [32382, 40606, 8224], [60652, 31611, 63479], [35209, 47802, 50886], [32639, 25700, 43690], [1285, 40606, 34695]]], np.uint16)
# adam7_rgba
PNG_ADAM7_RGBA = bytes.fromhex('89504e470d0a1a0a0000000d494844520000000a0000000908060000017ca18d850000018649444154789c017b0184fe00263408bdd5be22d0018fd298359b8144ed007e7b0f17016c9ca58f0078005857748c2d8f09063d89004ee81564da90bbbe012f8f76a9531cbbf402743f5024b242f54b00d5252347a089a8efd1ab0ee2a18918e1062ce1c401abcf5c6fed78bf74bbe4e7babcf795029548f71700af63f4610659b9594c8b12eb02f20cd7f5d1b140015d56473992ca8331fedf45ba4f0ecd72a1e370f302df6eb476e7c0044496ab682e1dbcbbe49cebd41a03760d0738bf8f56ec23763e73ba0d288629ddbc08044b710be7677a08099b477f9f92d5db764f1e2a22008d7bde5768437d9275518c9e2a95b41a9e71ee6350b4de161b2b57839167e1aa2a553232d8ee6e3e015e023c10c068aec886d236d3182b0298404d6e0be0abe2758e1f9505de068560f5ed8db71b1f0c170206a2db5405f147e009d72c322a79fbb36e6e26cf2d85aba376c740997b24c101310b52c9c228650d03f4515979d5db7df5ea5dbaf18ac95b82181da4b3ac87277c48c91097bba882bbb188cbc09c1b4262f8e8ad78a09f39470000000049454e44ae426082')
ADAM7_RGBA_C0 = np.array([[[38, 52, 8, 189], [175, 99, 244, 97], [78, 232, 21, 100], [6, 89, 185, 89], [126, 123, 15, 23], [76, 139, 18, 235], [218, 144, 187, 190], [2, 242, 12, 215], [213, 190, 34, 208], [245, 209, 177, 64]], [[141, 123, 222, 87], [104, 67, 125, 146], [117, 81, 140, 158], [42, 149, 180, 26], [158, 113, 238, 99], [80, 180, 222, 22], [27, 43, 87, 131], [145, 103, 225, 170], [42, 85, 50, 50], [216, 238, 110, 62]], [[213, 37, 35, 71], [93, 86, 71, 57], [160, 137, 168, 239], [239, 32, 202, 106], [209, 171, 14, 226], [237, 255, 15, 36], [161, 137, 24, 225], [60, 13, 220, 150], [6, 44, 225, 196], [221, 240, 76, 137]], [[94, 2, 60, 16], [30, 106, 234, 216], [164, 60, 32, 171], [188, 103, 34, 67], [252, 180, 144, 78], [220, 95, 114, 195], [106, 126, 7, 200], [72, 132, 140, 40], [61, 113, 25, 223], [88, 144, 37, 246]], [[120, 0, 88, 87], [60, 196, 251, 175], [47, 143, 118, 169], [214, 224, 206, 174], [116, 140, 45, 143], [131, 170, 119, 82], [130, 171, 49, 157], [89, 201, 151, 122], [9, 6, 61, 137], [121, 219, 32, 163]], [[100, 164, 23, 100], [35, 91, 49, 184], [173, 19, 76, 221], [230, 224, 29, 246], [106, 34, 182, 29], [9, 228, 29, 102], [224, 69, 71, 97], [195, 168, 77, 41], [110, 124, 107, 168], [26, 184, 138, 3]], [[171, 207, 92, 111], [148, 111, 132, 143], [152, 71, 27, 227], [116, 54, 255, 138], [83, 43, 2, 157], [158, 230, 249, 225], [15, 34, 151, 159], [53, 228, 240, 51], [164, 106, 142, 182], [128, 188, 68, 115]], [[38, 163, 100, 171], [249, 90, 199, 166], [189, 147, 67, 178], [91, 130, 139, 86], [122, 111, 68, 236], [237, 48, 87, 37], [46, 3, 95, 218], [51, 253, 216, 60], [1, 68, 108, 50], [169, 153, 189, 124]], [[143, 210, 152, 53], [223, 224, 143, 118], [163, 206, 198, 205], [70, 233, 7, 127], [108, 156, 165, 143], [15, 48, 134, 128], [52, 237, 38, 232], [161, 5, 97, 169], [42, 83, 220, 34], [240, 35, 110, 203]]], np.uint8)
ADAM7_RGBA_C3 = np.array([[[38, 52, 8], [175, 99, 244], [78, 232, 21], [6, 89, 185], [126, 123, 15], [76, 139, 18], [218, 144, 187], [2, 242, 12], [213, 190, 34], [245, 209, 177]], [[141, 123, 222], [104, 67, 125], [117, 81, 140], [42, 149, 180], [158, 113, 238], [80, 180, 222], [27, 43, 87], [145, 103, 225], [42, 85, 50], [216, 238, 110]], [[213, 37, 35], [93, 86, 71], [160, 137, 168], [239, 32, 202], [209, 171, 14], [237, 255, 15], [161, 137, 24], [60, 13, 220], [6, 44, 225], [221, 240, 76]], [[94, 2, 60], [30, 106, 234], [164, 60, 32], [188, 103, 34], [252, 180, 144], [220, 95, 114], [106, 126, 7], [72, 132, 140], [61, 113, 25], [88, 144, 37]], [[120, 0, 88], [60, 196, 251], [47, 143, 118], [214, 224, 206], [116, 140, 45], [131, 170, 119], [130, 171, 49], [89, 201, 151], [9, 6, 61], [121, 219, 32]], [[100, 164, 23], [35, 91, 49], [173, 19, 76], [230, 224, 29], [106, 34, 182], [9, 228, 29], [224, 69, 71], [195, 168, 77], [110, 124, 107], [26, 184, 138]], [[171, 207, 92], [148, 111, 132], [152, 71, 27], [116, 54, 255], [83, 43, 2], [158, 230, 249], [15, 34, 151], [53, 228, 240], [164, 106, 142], [128, 188, 68]], [[38, 163, 100], [249, 90, 199], [189, 147, 67], [91, 130, 139], [122, 111, 68], [237, 48, 87], [46, 3, 95], [51, 253, 216], [1, 68, 108], [169, 153, 189]], [[143, 210, 152], [223, 224, 143], [163, 206, 198], [70, 233, 7], [108, 156, 165], [15, 48, 134], [52, 237, 38], [161, 5, 97], [42, 83, 220], [240, 35, 110]]], np.uint8)
# adam7_gray2
PNG_ADAM7_GRAY2 = bytes.fromhex('89504e470d0a1a0a0000000d49484452000000060000000502000000017e84ea0d0000002049444154789c6360606860706068606460686178c2c8c33487e1f10346b9490035f205c97a797b520000000049454e44ae426082')
ADAM7_GRAY2_C0 = np.array([[[0], [255], [170], [170], [170], [85]], [[255], [170], [0], [255], [255], [170]], [[170], [0], [0], [0], [85], [255]], [[0], [85], [255], [170], [170], [255]], [[85], [170], [0], [170], [0], [170]]], np.uint8)
# gray16
PNG_GRAY16 = bytes.fromhex('89504e470d0a1a0a0000000d4948445200000003000000021000000000e88fe5850000001649444154789c63d8946ab5f5d60c46fda7f56c01b9002c8305d02f81c0f00000000049454e44ae426082')
GRAY16_C0 = np.array([[[178], [58], [218]], [[47], [174], [254]]], np.uint8)
GRAY16_U16 = np.array([[[45669], [15029], [55960]], [[12261], [44779], [65112]]], np.uint16)
GIF_ANIM = bytes.fromhex('47494638396107000a00f20000abce05ce7883a149fa0d47629268210b000c26ff30a7c03c2c0000000007000a00400326580a47272e18200011e304028cd8c7531083e4091a5578dd4a09465005012511ce64188390000021f90401000001002c020005000400030081486f43f92de5ccd81d64a07e0206dc143021025c0021f90401000007002c010001000600050000030d082143e5e628c51c9481b69200003b')
GIF_ANIM_FRAMES = np.array([[[[11, 0, 12], [11, 0, 12], [11, 0, 12], [171, 206, 5], [167, 192, 60], [146, 104, 33], [167, 192, 60]], [[161, 73, 250], [161, 73, 250], [167, 192, 60], [206, 120, 131], [171, 206, 5], [161, 73, 250], [11, 0, 12]], [[171, 206, 5], [38, 255, 48], [161, 73, 250], [206, 120, 131], [146, 104, 33], [167, 192, 60], [167, 192, 60]], [[38, 255, 48], [161, 73, 250], [171, 206, 5], [38, 255, 48], [11, 0, 12], [38, 255, 48], [171, 206, 5]], [[171, 206, 5], [146, 104, 33], [161, 73, 250], [13, 71, 98], [167, 192, 60], [206, 120, 131], [146, 104, 33]], [[161, 73, 250], [161, 73, 250], [38, 255, 48], [206, 120, 131], [161, 73, 250], [171, 206, 5], [206, 120, 131]], [[161, 73, 250], [11, 0, 12], [146, 104, 33], [13, 71, 98], [206, 120, 131], [38, 255, 48], [38, 255, 48]], [[206, 120, 131], [171, 206, 5], [161, 73, 250], [206, 120, 131], [38, 255, 48], [146, 104, 33], [146, 104, 33]], [[161, 73, 250], [146, 104, 33], [167, 192, 60], [206, 120, 131], [38, 255, 48], [171, 206, 5], [161, 73, 250]], [[167, 192, 60], [38, 255, 48], [171, 206, 5], [38, 255, 48], [38, 255, 48], [13, 71, 98], [161, 73, 250]]], [[[11, 0, 12], [11, 0, 12], [11, 0, 12], [171, 206, 5], [167, 192, 60], [146, 104, 33], [167, 192, 60]], [[161, 73, 250], [161, 73, 250], [167, 192, 60], [206, 120, 131], [171, 206, 5], [161, 73, 250], [11, 0, 12]], [[171, 206, 5], [38, 255, 48], [161, 73, 250], [206, 120, 131], [146, 104, 33], [167, 192, 60], [167, 192, 60]], [[38, 255, 48], [161, 73, 250], [171, 206, 5], [38, 255, 48], [11, 0, 12], [38, 255, 48], [171, 206, 5]], [[171, 206, 5], [146, 104, 33], [161, 73, 250], [13, 71, 98], [167, 192, 60], [206, 120, 131], [146, 104, 33]], [[161, 73, 250], [161, 73, 250], [100, 160, 126], [100, 160, 126], [204, 216, 29], [171, 206, 5], [206, 120, 131]], [[161, 73, 250], [11, 0, 12], [72, 111, 67], [100, 160, 126], [206, 120, 131], [204, 216, 29], [38, 255, 48]], [[206, 120, 131], [171, 206, 5], [204, 216, 29], [72, 111, 67], [38, 255, 48], [204, 216, 29], [146, 104, 33]], [[161, 73, 250], [146, 104, 33], [167, 192, 60], [206, 120, 131], [38, 255, 48], [171, 206, 5], [161, 73, 250]], [[167, 192, 60], [38, 255, 48], [171, 206, 5], [38, 255, 48], [38, 255, 48], [13, 71, 98], [161, 73, 250]]], [[[11, 0, 12], [11, 0, 12], [11, 0, 12], [171, 206, 5], [167, 192, 60], [146, 104, 33], [167, 192, 60]], [[161, 73, 250], [171, 206, 5], [206, 120, 131], [161, 73, 250], [13, 71, 98], [146, 104, 33], [11, 0, 12]], [[171, 206, 5], [146, 104, 33], [11, 0, 12], [38, 255, 48], [146, 104, 33], [171, 206, 5], [206, 120, 131]], [[38, 255, 48], [171, 206, 5], [206, 120, 131], [161, 73, 250], [13, 71, 98], [146, 104, 33], [11, 0, 12]], [[171, 206, 5], [146, 104, 33], [11, 0, 12], [38, 255, 48], [167, 192, 60], [171, 206, 5], [206, 120, 131]], [[161, 73, 250], [171, 206, 5], [206, 120, 131], [161, 73, 250], [13, 71, 98], [146, 104, 33], [11, 0, 12]], [[161, 73, 250], [11, 0, 12], [72, 111, 67], [100, 160, 126], [206, 120, 131], [204, 216, 29], [38, 255, 48]], [[206, 120, 131], [171, 206, 5], [204, 216, 29], [72, 111, 67], [38, 255, 48], [204, 216, 29], [146, 104, 33]], [[161, 73, 250], [146, 104, 33], [167, 192, 60], [206, 120, 131], [38, 255, 48], [171, 206, 5], [161, 73, 250]], [[167, 192, 60], [38, 255, 48], [171, 206, 5], [38, 255, 48], [38, 255, 48], [13, 71, 98], [161, 73, 250]]]], np.uint8)
GIF_SMALL = bytes.fromhex('47494638396105000400f20000abce05ce7883a149fa0d47629268210b000c26ff30a7c03c21f90401000002002c010001000300020000030418755593003b')
GIF_SMALL_FRAMES = np.array([[[[0, 0, 0], [0, 0, 0], [0, 0, 0]], [[0, 0, 0], [206, 120, 131], [11, 0, 12]]]], np.uint8)
BMP24 = bytes.fromhex('424d4e0000000000000036000000280000000300000002000000010018000000000018000000130b0000130b00000000000000000000ed1bef80217115dad2000000fc555075e81d2b22f3000000')
BMP24_PIXELS = np.array([[[80, 85, 252], [29, 232, 117], [243, 34, 43]], [[239, 27, 237], [113, 33, 128], [210, 218, 21]]], np.uint8)
BMP32 = bytes.fromhex('424d4e00000000000000360000002800000002000000fdffffff010020000000000018000000130b0000130b00000000000000000000e66389428015ac1c4ff5dc1859f53b3c579e050a1fc51c06')
BMP32_PIXELS = np.array([[[137, 99, 230, 66], [172, 21, 128, 28]], [[220, 245, 79, 24], [59, 245, 89, 60]], [[5, 158, 87, 10], [28, 197, 31, 6]]], np.uint8)
GIF_BIG = bytes.fromhex('47494638396150003c00f20000000000ff000000ff000000ffffff0000ffffff00ffffffff2c0000000050003c000003ff38badcfe908149abbd38d7c83b078130108571802269a2637986ed0aab8767df03201086cefbbd5df027041a8b429c3212201c0405c0c0d07c46a755a894ead462bb57c372dc0814cce8b33acd5ebbdb69b27c1010030a8203a19ec3ebf977797b767e837d827364020006048b8d8f8e8c92909391979693896302010007060504039d9fa1a3a5a0a2a49eaaa8ada79b9c02b4b5b6b7b8b9bab5b24b342cbf332ec0c3c23222bd3805070103cbcdcfceccd2d0d3d1d7d6d3c9375c565b5961e0df60e3dedb360400e9ebeaedecefeef1f0ece71e86817f84828085fcfbfa35ea71a0441053a58305331d14c86155aa580f1dc292688a222886110a68dcc8b1ffa3c78f20396284502c45c9182f4c1e43096ce48321308f10991913c94c970eba79d1198edc17733ca5e06c604040d1a34693225daab42953a44319e43b3415dfbd7e00af228b3ae040013a5ec17e0d1096ecd8b268cfaaa5c355812b56155fc585fb36a2dcb63934e8ddab012fb195c154a664692c2057993569225e9ca4adb89f3b1f07851c062f9c37982f6b566339abbfaa58a96ad583d7604284a6536b6a6b972ec48972ebc2c64b6a97eddbbb6807262cf8efe0dd78b1551b4eadb870e3dada4e5e2eb9b9cfb6f3e4498f4ebd1dded1d83f6707785d356a85a74f078ffd7a6eebf3b082875ccf3e6470c02777cb8f8f37b17dc68a6dd6770e947fe4e77cca3925e053031658145ea0fd239a760cea83e05a668925618414a6352182e5c966de6ce80975185f2086e85761be954862617ed9749f8af8c164994fccc1e85f658e6566e366387ee598673c2ed8a355a581e75d784396c6e1911b26f95669b835e9a46ef14509df948305970d71c765796571fbc9e8657f5f6a9100003b')
# fmt: on
GIF_BIG_TABLE = np.array([[0, 0, 0], [255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0],
                          [0, 255, 255], [255, 0, 255], [255, 255, 255]], np.uint8)


def _same(got, expected):
    got = got.numpy()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("data, channels, dtype, expected", [
    (PNG_TF_RGB8, 0, tf.uint8, TF_RGB8_C0),
    (PNG_TF_GA16, 0, tf.uint16, TF_GA16_C0),
    (PNG_PAL4_TRNS, 0, tf.uint8, PAL4_TRNS_C0),
    (PNG_PAL4_TRNS, 1, tf.uint8, PAL4_TRNS_C1),
    (PNG_PAL4_TRNS, 3, tf.uint8, PAL4_TRNS_C3),
    (PNG_PAL4_TRNS, 4, tf.uint8, PAL4_TRNS_C4),
    (PNG_PAL4, 0, tf.uint8, PAL4_C0),
    (PNG_GRAY1, 0, tf.uint8, GRAY1_C0),
    (PNG_GRAY1, 3, tf.uint8, GRAY1_C3),
    (PNG_GRAY1, 0, tf.uint16, GRAY1_U16),
    (PNG_GRAY2_TRNS, 0, tf.uint8, GRAY2_TRNS_C0),
    (PNG_GRAY2_TRNS, 4, tf.uint8, GRAY2_TRNS_C4),
    (PNG_RGB16_TRNS, 0, tf.uint8, RGB16_TRNS_C0),
    (PNG_RGB16_TRNS, 1, tf.uint8, RGB16_TRNS_C1),
    (PNG_RGB16_TRNS, 4, tf.uint8, RGB16_TRNS_C4),
    (PNG_RGB16_TRNS, 4, tf.uint16, RGB16_TRNS_U16C4),
    (PNG_RGB8, 1, tf.uint8, RGB8_C1),
    (PNG_RGB8, 0, tf.uint16, RGB8_U16),
    (PNG_ADAM7_RGBA, 0, tf.uint8, ADAM7_RGBA_C0),
    (PNG_ADAM7_RGBA, 3, tf.uint8, ADAM7_RGBA_C3),
    (PNG_ADAM7_GRAY2, 0, tf.uint8, ADAM7_GRAY2_C0),
    (PNG_GRAY16, 0, tf.uint8, GRAY16_C0),
    (PNG_GRAY16, 0, tf.uint16, GRAY16_U16),
])
def test_decode_png_matches_tf(data, channels, dtype, expected):
    _same(tf.io.decode_png(data, channels=channels, dtype=dtype), expected)
    assert tf.image.decode_png is tf.io.decode_png


def test_opaque_alpha_added_to_a_low_depth_palette_is_255():
    rgba = tf.io.decode_png(PNG_PAL4, channels=4).numpy()
    np.testing.assert_array_equal(rgba[..., :3], PAL4_C0)
    assert (rgba[..., 3] == 255).all()


def test_encode_png_round_trips_every_channel_count_and_depth():
    rng = np.random.default_rng(0)
    smooth = np.add.outer(np.arange(9), np.arange(13))[..., None] * 7   # favours Sub/Up/Paeth
    for dtype, high in ((np.uint8, 256), (np.uint16, 65536)):
        for channels in (1, 2, 3, 4):
            image = rng.integers(0, high, (9, 13, channels)).astype(dtype)
            image[:4] = (smooth[:4] % high).astype(dtype)
            for compression in (-1, 0, 9):
                data = tf.io.encode_png(tf.constant(image), compression=compression)
                assert data.dtype == tf.string and data.shape == []
                _same(tf.io.decode_png(data, dtype=tf.as_dtype(dtype)), image)


def test_encoded_png_is_a_valid_stream_of_chunks():
    data = tf.image.encode_png(np.zeros((2, 3, 3), np.uint8)).numpy()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    # IHDR: width 3, height 2, depth 8, colour type 2 (RGB); its CRC is zlib.crc32
    assert data[16:29] == bytes([0, 0, 0, 3, 0, 0, 0, 2, 8, 2, 0, 0, 0])
    assert data[29:33] == zlib.crc32(data[12:29]).to_bytes(4, "big")
    assert data[-12:] == b"\x00\x00\x00\x00IEND\xaeB`\x82"


def test_png_errors_name_the_problem():
    with pytest.raises(tf.errors.InvalidArgumentError, match="decode_png: the contents are not"):
        tf.io.decode_png(b"GIF89a....")
    corrupt = bytearray(PNG_TF_RGB8)
    corrupt[20] ^= 1     # inside IHDR
    with pytest.raises(tf.errors.InvalidArgumentError, match="CRC error in the PNG b'IHDR'"):
        tf.io.decode_png(bytes(corrupt))
    with pytest.raises(tf.errors.InvalidArgumentError, match="truncated"):
        tf.io.decode_png(PNG_TF_RGB8[:40])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"channels must be one of "
                                                             r"\(0, 1, 3, 4\), got 2"):
        tf.io.decode_png(PNG_TF_RGB8, channels=2)
    with pytest.raises(TypeError, match="decode_png: dtype must be one of .* got float32"):
        tf.io.decode_png(PNG_TF_RGB8, dtype=tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="scalar string, but had shape"):
        tf.io.decode_png([PNG_TF_RGB8, PNG_TF_RGB8])
    with pytest.raises(TypeError, match="encode_png: image must be uint8 or uint16, got "
                                        "float32"):
        tf.io.encode_png(np.zeros((2, 2, 3), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"1-4 channels, got shape "
                                                             r"\(2, 2\)"):
        tf.io.encode_png(np.zeros((2, 2), np.uint8))
    with pytest.raises(tf.errors.InvalidArgumentError, match="compression must be .* got 10"):
        tf.io.encode_png(np.zeros((2, 2, 1), np.uint8), compression=10)


def test_decode_bmp_matches_tf():
    _same(tf.io.decode_bmp(BMP24), BMP24_PIXELS)           # bottom-up, padded rows
    _same(tf.image.decode_bmp(BMP32), BMP32_PIXELS)        # top-down, with alpha
    _same(tf.io.decode_bmp(BMP32, channels=3), BMP32_PIXELS[..., :3])
    with_alpha = tf.io.decode_bmp(BMP24, channels=4).numpy()
    np.testing.assert_array_equal(with_alpha[..., :3], BMP24_PIXELS)
    assert (with_alpha[..., 3] == 255).all()
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"channels must be one of "
                                                             r"\(0, 3, 4\), got 1"):
        tf.io.decode_bmp(BMP24, channels=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="pixel data is truncated"):
        tf.io.decode_bmp(BMP24[:-4])


def test_decode_gif_matches_tf():
    # 3 frames: interlaced, a sub-rectangle with a local colour table and transparency
    _same(tf.io.decode_gif(GIF_ANIM), GIF_ANIM_FRAMES)
    # TF's canvas is the largest frame, not the logical screen
    _same(tf.image.decode_gif(GIF_SMALL), GIF_SMALL_FRAMES)
    # 4800 pixels: LZW codes grow to 12 bits and the table is cleared
    i, j = np.mgrid[0:60, 0:80]
    index = (i * j + i // 3) % 8
    index[:, :40] = 3
    _same(tf.io.decode_gif(GIF_BIG), GIF_BIG_TABLE[index][None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="decode_gif: the GIF data is truncated"):
        tf.io.decode_gif(GIF_BIG[:600])


def test_decode_image_dispatches_on_the_magic_bytes():
    _same(tf.io.decode_image(PNG_TF_RGB8), TF_RGB8_C0)
    _same(tf.image.decode_image(BMP24), BMP24_PIXELS)
    _same(tf.io.decode_image(GIF_ANIM), GIF_ANIM_FRAMES)
    _same(tf.io.decode_image(GIF_ANIM, expand_animations=False), GIF_ANIM_FRAMES[0])
    _same(tf.io.decode_image(PNG_GRAY16, dtype=tf.uint16), GRAY16_U16)
    # float: TF decodes PNGs at 16 bits and divides by 65535, other formats by 255
    np.testing.assert_allclose(tf.io.decode_image(PNG_GRAY16, dtype=tf.float32).numpy(),
                               GRAY16_U16 / 65535.0, rtol=1e-6)
    np.testing.assert_allclose(tf.io.decode_image(BMP24, dtype=tf.float32).numpy(),
                               BMP24_PIXELS / 255.0, rtol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"unknown image format .* "
                                                             r"b'hello'"):
        tf.io.decode_image(b"hello")


def test_jpeg_is_recognised_and_refused_with_advice():
    jpeg = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"
    assert tf.io.is_jpeg(jpeg).numpy() and tf.image.is_jpeg(tf.constant(jpeg)).dtype == tf.bool
    assert not tf.io.is_jpeg(PNG_TF_RGB8).numpy()
    assert tf.io.is_jpeg(jpeg).shape == []
    with pytest.raises(tf.errors.UnimplementedError, match="decode_image: the contents are a "
                                                           "JPEG image; minitf has no JPEG"):
        tf.io.decode_image(jpeg)
    with pytest.raises(tf.errors.UnimplementedError, match="decode_jpeg: .*Pillow.*"
                                                           "convert_to_tensor"):
        tf.io.decode_jpeg(jpeg)


def test_codecs_work_on_files_and_inside_dataset_map(tmp_path):
    for i, data in enumerate((PNG_TF_RGB8, PNG_ADAM7_RGBA)):
        (tmp_path / f"{i}.png").write_bytes(data)
    files = tf.data.Dataset.from_tensor_slices(sorted(str(p) for p in tmp_path.glob("*.png")))
    images = files.map(lambda f: tf.io.decode_png(tf.io.read_file(f), channels=3))
    got = [image.numpy() for image in images]
    np.testing.assert_array_equal(got[0], TF_RGB8_C0)
    np.testing.assert_array_equal(got[1], ADAM7_RGBA_C3)
    encoded = tf.data.Dataset.from_tensor_slices(np.zeros((2, 3, 4, 1), np.uint8)).map(
        tf.io.encode_png).map(tf.io.decode_png)
    assert [tuple(e.shape) for e in encoded] == [(3, 4, 1), (3, 4, 1)]


def test_decode_in_minitf_function_runs_eagerly():
    @tf.function
    def decode(data):
        return tf.io.decode_png(data)
    with pytest.warns(tf.EagerFallbackWarning, match="decode_png"):
        _same(decode(tf.constant(PNG_TF_RGB8)), TF_RGB8_C0)
    _same(decode(tf.constant(PNG_GRAY16)), GRAY16_C0)
