// Lists UCX's transports and devices through UCT's component query: the same
// view `ucx_info -d` gives, without starting a UCP context.
#include <ucp/api/ucp.h>
#include <uct/api/uct.h>

#include "mpidsm/info.hpp"

namespace mpidsm {
namespace {

const char* device_type_name(uct_device_type_t type) {
  switch (type) {
    case UCT_DEVICE_TYPE_NET:
      return "net";
    case UCT_DEVICE_TYPE_SHM:
      return "shm";
    case UCT_DEVICE_TYPE_ACC:
      return "acc";
    case UCT_DEVICE_TYPE_SELF:
      return "self";
    default:
      return "other";
  }
}

void list_memory_domain(uct_component_h component, const char* component_name, const char* md_name,
                        std::vector<UcxResource>& out) {
  uct_md_config_t* config = nullptr;
  if (uct_md_config_read(component, nullptr, nullptr, &config) != UCS_OK) return;
  uct_md_h md = nullptr;
  ucs_status_t status = uct_md_open(component, md_name, config, &md);
  uct_config_release(config);
  if (status != UCS_OK) return;
  uct_tl_resource_desc_t* resources = nullptr;
  unsigned count = 0;
  if (uct_md_query_tl_resources(md, &resources, &count) == UCS_OK) {
    for (unsigned i = 0; i < count; ++i)
      out.push_back({component_name, md_name, resources[i].tl_name, resources[i].dev_name,
                     device_type_name(resources[i].dev_type)});
    uct_release_tl_resource_list(resources);
  }
  uct_md_close(md);
}

}  // namespace

std::string ucx_runtime_version() {
  return ucp_get_version_string();
}

std::vector<UcxResource> ucx_resources() {
  std::vector<UcxResource> out;
  uct_component_h* components = nullptr;
  unsigned count = 0;
  if (uct_query_components(&components, &count) != UCS_OK) return out;
  for (unsigned c = 0; c < count; ++c) {
    uct_component_attr_t attr{};
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME | UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    if (uct_component_query(components[c], &attr) != UCS_OK) continue;
    std::vector<uct_md_resource_desc_t> mds(attr.md_resource_count);
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = mds.data();
    if (uct_component_query(components[c], &attr) != UCS_OK) continue;
    for (const auto& md : mds) list_memory_domain(components[c], attr.name, md.md_name, out);
  }
  uct_release_component_list(components);
  return out;
}

}  // namespace mpidsm
