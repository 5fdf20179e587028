/* Tests of json_output: each member helper writes its name and value exactly, in order, as
 * json-glib's generator prints them. */
#include "ms_test.h"
#include "sim/base/json_output.h"

static void
test_members(void)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    ms_json_member_string(b, "name", "a \"b\"");
    ms_json_member_int(b, "big", G_MININT64);
    ms_json_member_int(b, "n", 42);
    ms_json_member_double(b, "x", 0.25);
    json_builder_end_object(b);
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    g_autoptr(JsonGenerator) gen = json_generator_new();
    json_generator_set_root(gen, root);
    g_autofree char *text = json_generator_to_data(gen, NULL);
    CU_ASSERT_STRING_EQUAL(text, "{\"name\":\"a \\\"b\\\"\",\"big\":-9223372036854775808,\"n\":42,"
                                 "\"x\":0.25}");
    JsonObject *o = json_node_get_object(root);
    CU_ASSERT_EQUAL(json_node_get_value_type(json_object_get_member(o, "n")), G_TYPE_INT64);
    CU_ASSERT_EQUAL(json_node_get_value_type(json_object_get_member(o, "x")), G_TYPE_DOUBLE);
}

int
main(int argc, char **argv)
{
    static const MsTestCase tests[] = {
        {"members as written", test_members},
        {NULL, NULL},
    };
    static const MsTestSuite suites[] = {{"json_output", NULL, NULL, tests}, {NULL}};
    return ms_test_main(argc, argv, suites);
}
