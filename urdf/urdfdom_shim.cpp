// knead's only C++ translation unit: urdfdom (C++) behind the plain C structs of urdfdom_shim.h.
// Every exception is caught here; urdfdom's console_bridge output is captured, not printed, and
// its last error becomes the message the C side puts in kn_error. urdfdom keeps no record of the
// XML it ignores, so the same text is walked with TinyXML (urdfdom's own XML parser) to report it.
#include "urdf/urdfdom_shim.h"

#include <console_bridge/console.h>
#include <tinyxml.h>
#include <urdf_parser/urdf_parser.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

//---- console_bridge capture ----

// Keeps urdfdom's messages instead of printing them. A rejection is explained by all of them in
// order: urdfdom logs the reason first ("Joint [j1] is of type REVOLUTE but it does not specify
// limits") and a generic line last ("joint xml is not initialized correctly").
class Capture : public console_bridge::OutputHandler {
 public:
  std::vector<std::string> messages;
  void log(const std::string& text, console_bridge::LogLevel level, const char*, int) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_WARN && messages.size() < 16) messages.push_back(text);
  }
  std::string joined() const {
    std::string s;
    for (const std::string& m : messages) s += (s.empty() ? "" : "; ") + m;
    return s.empty() ? std::string("no reason given") : s;
  }
};

// An input error found by knead's own checks of the XML, with its line.
struct XmlError : std::runtime_error {
  int line;
  XmlError(const std::string& what, int l) : std::runtime_error(what), line(l) {}
};

// console_bridge's handler and level are process-global: one parse at a time.
std::mutex g_parse_mutex;

//---- small helpers ----

char* dup(const std::string& s) {
  char* c = static_cast<char*>(std::malloc(s.size() + 1));
  if (!c) throw std::bad_alloc();
  std::memcpy(c, s.c_str(), s.size() + 1);
  return c;
}

template <class T>
T* alloc_array(size_t n) {
  T* p = static_cast<T*>(std::calloc(n ? n : 1, sizeof(T)));
  if (!p) throw std::bad_alloc();
  return p;
}

void set_origin(const urdf::Pose& pose, kn_ushim_origin* o) {
  o->xyz[0] = pose.position.x;
  o->xyz[1] = pose.position.y;
  o->xyz[2] = pose.position.z;
  o->quat[0] = pose.rotation.w;
  o->quat[1] = pose.rotation.x;
  o->quat[2] = pose.rotation.y;
  o->quat[3] = pose.rotation.z;
}

void set_geometry(const urdf::Geometry& g, kn_ushim_geom* out) {
  out->scale[0] = out->scale[1] = out->scale[2] = 1.0;
  switch (g.type) {
    case urdf::Geometry::SPHERE:
      out->shape = KN_USHIM_SPHERE;
      out->size[0] = static_cast<const urdf::Sphere&>(g).radius;
      break;
    case urdf::Geometry::BOX: {
      const urdf::Box& b = static_cast<const urdf::Box&>(g);
      out->shape = KN_USHIM_BOX;
      out->size[0] = b.dim.x;
      out->size[1] = b.dim.y;
      out->size[2] = b.dim.z;
      break;
    }
    case urdf::Geometry::CYLINDER: {
      const urdf::Cylinder& c = static_cast<const urdf::Cylinder&>(g);
      out->shape = KN_USHIM_CYLINDER;
      out->size[0] = c.radius;
      out->size[1] = c.length;
      break;
    }
    case urdf::Geometry::MESH: {
      const urdf::Mesh& m = static_cast<const urdf::Mesh&>(g);
      out->shape = KN_USHIM_MESH;
      out->filename = dup(m.filename);
      out->scale[0] = m.scale.x;
      out->scale[1] = m.scale.y;
      out->scale[2] = m.scale.z;
      break;
    }
  }
}

//---- the XML urdfdom ignores ----

// Counts ignored elements by kind, in the order first met, with where the first one was.
class Notes {
 public:
  void add(const std::string& what, const std::string& why, const std::string& where) {
    auto it = index_.find(what);
    if (it == index_.end()) {
      index_[what] = items_.size();
      items_.push_back({what, why, where, 1});
    } else {
      items_[it->second].count++;
    }
  }
  void add_line(const std::string& line) { lines_.push_back(line); }
  std::vector<std::string> sentences() const {
    std::vector<std::string> out;
    for (const Item& i : items_) {
      std::string s = std::to_string(i.count) + " " + i.what + (i.count == 1 ? " element" : " elements") +
                      " ignored (" + i.why + ")";
      if (!i.where.empty()) s += ", first in " + i.where;
      out.push_back(s);
    }
    out.insert(out.end(), lines_.begin(), lines_.end());
    return out;
  }

 private:
  struct Item {
    std::string what, why, where;
    int count;
  };
  std::vector<Item> items_;
  std::map<std::string, size_t> index_;
  std::vector<std::string> lines_;
};

std::string attr(const TiXmlElement* e, const char* name) {
  const char* v = e->Attribute(name);
  return v ? v : "";
}

int count_children(const TiXmlElement* e, const char* tag) {
  int n = 0;
  for (const TiXmlElement* c = e->FirstChildElement(tag); c; c = c->NextSiblingElement(tag)) n++;
  return n;
}

// <visual>/<collision>: urdfdom reads the first <geometry> and its first shape, and the material.
void scan_geometry_element(const TiXmlElement* ge, const std::string& where, Notes* notes) {
  const std::string tag = ge->Value();
  int ngeometry = 0;
  for (const TiXmlElement* c = ge->FirstChildElement(); c; c = c->NextSiblingElement()) {
    const std::string t = c->Value();
    if (t == "geometry") {
      if (++ngeometry > 1) {
        notes->add("extra <geometry> in <" + tag + ">", "urdfdom reads only the first", where);
        continue;
      }
      int nshape = 0;
      for (const TiXmlElement* s = c->FirstChildElement(); s; s = s->NextSiblingElement())
        if (++nshape > 1)
          notes->add(std::string("extra <") + s->Value() + "> shape in <" + tag + "><geometry>",
                     "urdfdom reads only the first shape", where);
    } else if (t == "material" && tag == "visual") {
      if (c->FirstChildElement("texture"))
        notes->add("<material><texture>", "knead does not use textures", where);
    } else if (t != "origin" && t != "material") {
      notes->add("<" + tag + "><" + t + ">", "knead does not use it", where);
    }
  }
}

void scan_link(const TiXmlElement* le, const urdf::Link* link, Notes* notes) {
  const std::string where = "link '" + attr(le, "name") + "'";
  for (const TiXmlElement* c = le->FirstChildElement(); c; c = c->NextSiblingElement()) {
    const std::string t = c->Value();
    if (t == "visual" || t == "collision")
      scan_geometry_element(c, where, notes);
    else if (t == "inertial") {
      if (c != le->FirstChildElement("inertial"))
        notes->add("extra <inertial> in <link>", "urdfdom reads only the first", where);
    } else
      notes->add("<link><" + t + ">", "knead does not use it", where);
  }
  // urdfdom fails the whole file on a bad <visual>/<collision>; compare anyway so that a
  // version which skips them instead cannot drop geometry unnoticed.
  int nvis = count_children(le, "visual"), ncol = count_children(le, "collision");
  if (link && (size_t)nvis != link->visual_array.size())
    notes->add_line(where + ": " + std::to_string(nvis) + " <visual> in the file, urdfdom kept " +
                    std::to_string(link->visual_array.size()));
  if (link && (size_t)ncol != link->collision_array.size())
    notes->add_line(where + ": " + std::to_string(ncol) + " <collision> in the file, urdfdom kept " +
                    std::to_string(link->collision_array.size()));
}

void scan_joint(const TiXmlElement* je, Notes* notes) {
  const std::string where = "joint '" + attr(je, "name") + "'";
  static const std::set<std::string> used = {"origin", "parent", "child", "axis", "limit", "dynamics", "mimic"};
  for (const TiXmlElement* c = je->FirstChildElement(); c; c = c->NextSiblingElement()) {
    const std::string t = c->Value();
    if (!used.count(t)) notes->add("<joint><" + t + ">", "knead does not use it", where);
  }
}

// A Drake collision filter group as written (drake/multibody/parsing: <drake:collision_filter_group>).
struct FilterGroup {
  std::string name;
  int line = 0;
  std::vector<std::string> members, ignores;
};

// "drake:member" => "member": the unprefixed spelling is accepted for every tag of a group
std::string unprefixed(const std::string& tag) { return tag.compare(0, 6, "drake:") == 0 ? tag.substr(6) : tag; }

// the attribute, else the element's text (the SDFormat spelling <drake:member>link</drake:member>), else ""
std::string attr_or_text(const TiXmlElement* e, const char* name) {
  if (const char* v = e->Attribute(name)) return v;
  const char* t = e->GetText();
  return t ? t : "";
}

// <drake:collision_filter_group name>: members by link, ignored groups by name; the C side checks
// that they exist. Other children (<drake:member_group>) are reported as not used.
void scan_filter_group(const TiXmlElement* ge, std::vector<FilterGroup>* groups, Notes* notes) {
  FilterGroup g;
  g.name = attr(ge, "name");
  g.line = ge->Row();
  const std::string where = "collision filter group '" + g.name + "'";
  for (const TiXmlElement* c = ge->FirstChildElement(); c; c = c->NextSiblingElement()) {
    const std::string t = unprefixed(c->Value());
    if (t == "member") {
      g.members.push_back(attr_or_text(c, "link"));
    } else if (t == "ignored_collision_filter_group") {
      // the old RigidBodyTree spelling names the group in collision_filter_group="..."
      std::string n = attr_or_text(c, "name");
      if (n.empty()) n = attr(c, "collision_filter_group");
      g.ignores.push_back(n);
    } else {
      notes->add(std::string("<") + ge->Value() + "><" + c->Value() + ">", "knead does not use it", where);
    }
  }
  groups->push_back(g);
}

// Walks <robot>: document order of links and joints, collision filter groups, and everything
// knead does not use.
void scan_robot(const TiXmlElement* robot, const urdf::ModelInterface& model, std::vector<std::string>* link_order,
                std::vector<std::string>* joint_order, std::vector<FilterGroup>* groups, Notes* notes) {
  for (const TiXmlElement* c = robot->FirstChildElement(); c; c = c->NextSiblingElement()) {
    const std::string t = c->Value();
    const std::string name = attr(c, "name");
    if (t == "link") {
      link_order->push_back(name);
      scan_link(c, model.getLink(name).get(), notes);
    } else if (t == "joint") {
      joint_order->push_back(name);
      scan_joint(c, notes);
    } else if (t == "material") {
      // global materials are resolved into the visuals by urdfdom
    } else if (unprefixed(t) == "collision_filter_group") {
      scan_filter_group(c, groups, notes);
    } else if (t == "transmission" || t == "gazebo" || t == "sensor" || t == "ros2_control") {
      notes->add("<" + t + ">", "knead does not use " + t + " elements",
                 name.empty() ? std::string() : "'" + name + "'");
    } else {
      notes->add("<" + t + ">", "not a URDF element knead reads", name.empty() ? std::string() : "'" + name + "'");
    }
  }
}

kn_ushim_joint_type joint_type(int t) {
  switch (t) {
    case urdf::Joint::REVOLUTE: return KN_USHIM_REVOLUTE;
    case urdf::Joint::CONTINUOUS: return KN_USHIM_CONTINUOUS;
    case urdf::Joint::PRISMATIC: return KN_USHIM_PRISMATIC;
    case urdf::Joint::PLANAR: return KN_USHIM_PLANAR;
    case urdf::Joint::FLOATING: return KN_USHIM_FLOATING;
    case urdf::Joint::FIXED: return KN_USHIM_FIXED;
    default: throw std::runtime_error("joint of unknown type");
  }
}

//---- urdfdom model => C structs ----

void fill_link(const urdf::Link& l, kn_ushim_link* out) {
  out->name = dup(l.name);
  out->parent_joint = -1;
  if (l.inertial) {
    const urdf::Inertial& in = *l.inertial;
    out->has_inertial = 1;
    set_origin(in.origin, &out->inertial_origin);
    out->mass = in.mass;
    out->ixx = in.ixx;
    out->ixy = in.ixy;
    out->ixz = in.ixz;
    out->iyy = in.iyy;
    out->iyz = in.iyz;
    out->izz = in.izz;
  } else {
    out->inertial_origin.quat[0] = 1.0;
  }
  size_t n = l.visual_array.size() + l.collision_array.size();
  out->geoms = alloc_array<kn_ushim_geom>(n);
  for (const urdf::VisualSharedPtr& v : l.visual_array) {
    if (!v || !v->geometry) continue;
    kn_ushim_geom* g = &out->geoms[out->ngeom++];
    g->is_visual = 1;
    if (!v->name.empty()) g->name = dup(v->name);
    set_origin(v->origin, &g->origin);
    set_geometry(*v->geometry, g);
    // a material with only a texture keeps urdfdom's cleared colour (0, 0, 0, 1): no colour given
    if (v->material) {
      const urdf::Color& c = v->material->color;
      bool cleared = c.r == 0.0f && c.g == 0.0f && c.b == 0.0f && c.a == 1.0f;
      if (!(cleared && !v->material->texture_filename.empty())) {
        g->has_rgba = 1;
        g->rgba[0] = c.r;
        g->rgba[1] = c.g;
        g->rgba[2] = c.b;
        g->rgba[3] = c.a;
      }
    }
  }
  for (const urdf::CollisionSharedPtr& c : l.collision_array) {
    if (!c || !c->geometry) continue;
    kn_ushim_geom* g = &out->geoms[out->ngeom++];
    if (!c->name.empty()) g->name = dup(c->name);
    set_origin(c->origin, &g->origin);
    set_geometry(*c->geometry, g);
  }
}

void fill_joint(const urdf::Joint& j, const std::map<std::string, int>& link_index, kn_ushim_joint* out) {
  out->name = dup(j.name);
  out->type = joint_type(j.type);
  auto p = link_index.find(j.parent_link_name), c = link_index.find(j.child_link_name);
  if (p == link_index.end() || c == link_index.end())
    throw std::runtime_error("joint '" + j.name + "' names a link that does not exist");
  out->parent_link = p->second;
  out->child_link = c->second;
  set_origin(j.parent_to_joint_origin_transform, &out->origin);
  out->axis[0] = j.axis.x;
  out->axis[1] = j.axis.y;
  out->axis[2] = j.axis.z;
  if (j.limits) {
    out->has_limits = 1;
    out->lower = j.limits->lower;
    out->upper = j.limits->upper;
    out->effort = j.limits->effort;
    out->velocity = j.limits->velocity;
  }
  if (j.dynamics) {
    out->has_dynamics = 1;
    out->damping = j.dynamics->damping;
    out->friction = j.dynamics->friction;
  }
  if (j.mimic) {
    out->has_mimic = 1;
    out->mimic_joint = dup(j.mimic->joint_name);
    out->multiplier = j.mimic->multiplier;
    out->offset = j.mimic->offset;
  }
}

void convert(const urdf::ModelInterface& model, const std::string& xml, kn_ushim_model* out) {
  out->name = dup(model.getName());
  std::vector<std::string> link_order, joint_order;
  std::vector<FilterGroup> groups;
  Notes notes;
  TiXmlDocument doc;
  doc.Parse(xml.c_str());
  const TiXmlElement* robot = doc.Error() ? nullptr : doc.FirstChildElement("robot");
  if (robot) scan_robot(robot, model, &link_order, &joint_order, &groups, &notes);

  // document order first; anything urdfdom holds that the walk did not see comes after
  std::map<std::string, int> link_index;
  std::vector<urdf::LinkSharedPtr> all_links;
  model.getLinks(all_links);
  std::vector<const urdf::Link*> links;
  for (const std::string& n : link_order) {
    urdf::LinkConstSharedPtr l = model.getLink(n);
    if (l && !link_index.count(n)) {
      link_index[n] = (int)links.size();
      links.push_back(l.get());
    }
  }
  for (const urdf::LinkSharedPtr& l : all_links)
    if (!link_index.count(l->name)) {
      link_index[l->name] = (int)links.size();
      links.push_back(l.get());
    }
  std::vector<const urdf::Joint*> joints;
  std::set<std::string> seen;
  for (const std::string& n : joint_order) {
    auto it = model.joints_.find(n);
    if (it != model.joints_.end() && !seen.count(n)) {
      seen.insert(n);
      joints.push_back(it->second.get());
    }
  }
  for (const auto& kv : model.joints_)
    if (!seen.count(kv.first)) joints.push_back(kv.second.get());

  out->links = alloc_array<kn_ushim_link>(links.size());
  for (const urdf::Link* l : links) fill_link(*l, &out->links[out->nlink++]);
  out->joints = alloc_array<kn_ushim_joint>(joints.size());
  for (const urdf::Joint* j : joints) {
    kn_ushim_joint* jo = &out->joints[out->njoint++];  // counted first: freed even if filling throws
    fill_joint(*j, link_index, jo);
    // urdfdom accepts a link that is the child of several joints and keeps one of them as its
    // parent joint; the tree is what urdfdom kept, the others are reported by the C side
    const urdf::Link* child = links[jo->child_link];
    if (child->parent_joint && child->parent_joint.get() == j) out->links[jo->child_link].parent_joint = out->njoint - 1;
  }
  urdf::LinkConstSharedPtr root = model.getRoot();
  if (!root) throw std::runtime_error("urdfdom found no root link");
  out->root = link_index.at(root->name);

  std::vector<std::string> sentences = notes.sentences();
  out->notes = alloc_array<char*>(sentences.size());
  for (const std::string& s : sentences) out->notes[out->nnote++] = dup(s);

  out->filter_groups = alloc_array<kn_ushim_filter_group>(groups.size());
  for (const FilterGroup& g : groups) {
    kn_ushim_filter_group* fg = &out->filter_groups[out->nfilter_group++];  // counted first: freed on throw
    fg->name = dup(g.name);
    fg->line = g.line;
    fg->members = alloc_array<char*>(g.members.size());
    for (const std::string& m : g.members) fg->members[fg->nmember++] = dup(m);
    fg->ignores = alloc_array<char*>(g.ignores.size());
    for (const std::string& i : g.ignores) fg->ignores[fg->nignore++] = dup(i);
  }
}

//---- UTF-8 ----

// TinyXML 2.6.2 (urdfdom's parser) skips a UTF-8 lead byte's whole sequence length without
// looking: a truncated sequence before the end of the text makes it read past the terminating
// NUL (found by tests/fuzz/fuzz_urdf.c). A URDF is UTF-8 text, so check the structure first.
// (text) => throws XmlError at the first byte that does not start or continue a sequence properly
void check_utf8(const std::string& xml) {
  int line = 1;
  for (size_t i = 0; i < xml.size();) {
    unsigned char c = (unsigned char)xml[i];
    size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    bool ok = n > 0 && i + n <= xml.size();
    for (size_t k = 1; ok && k < n; k++) ok = ((unsigned char)xml[i + k] & 0xC0) == 0x80;
    if (!ok) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      throw XmlError(std::string("not UTF-8 text: byte ") + hex + " at offset " + std::to_string(i) +
                         " does not start a complete UTF-8 sequence (a URDF must be UTF-8)",
                     line);
    }
    if (c == '\n') line++;
    i += n;
  }
}

//---- numbers in the attributes knead uses ----

// urdfdom reads numbers with std::stod-like parsing that accepts "nan", and for some attributes
// ignores what follows a number. Every number knead uses must be one whole finite number.
struct NumericAttrs {
  const char* tag;
  const char* attrs[7];
};
const NumericAttrs kNumeric[] = {
    {"origin", {"xyz", "rpy", nullptr}},
    {"axis", {"xyz", nullptr}},
    {"limit", {"lower", "upper", "effort", "velocity", nullptr}},
    {"dynamics", {"damping", "friction", nullptr}},
    {"mimic", {"multiplier", "offset", nullptr}},
    {"mass", {"value", nullptr}},
    {"inertia", {"ixx", "ixy", "ixz", "iyy", "iyz", "izz", nullptr}},
    {"box", {"size", nullptr}},
    {"sphere", {"radius", nullptr}},
    {"cylinder", {"radius", "length", nullptr}},
    {"mesh", {"scale", nullptr}},
};

// (element, where) => throws XmlError on the first attribute value that is not whole finite numbers
void check_numbers(const TiXmlElement* e, const std::string& where) {
  const std::string tag = e->Value();
  for (const NumericAttrs& n : kNumeric) {
    if (tag != n.tag) continue;
    for (int a = 0; n.attrs[a]; a++) {
      const char* v = e->Attribute(n.attrs[a]);
      if (!v) continue;
      const char* c = v;
      int count = 0;
      while (*c) {
        while (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r') c++;
        if (!*c) break;
        char* end;
        double x = std::strtod(c, &end);
        const char* stop = end;
        bool bad = end == c || !(*end == 0 || *end == ' ' || *end == '\t' || *end == '\n' || *end == '\r') ||
                   !std::isfinite(x);
        if (bad) {
          size_t len = std::strcspn(c, " \t\r\n");
          throw XmlError(where + ": <" + tag + " " + n.attrs[a] + "=\"" + v + "\">: '" + std::string(c, len) +
                             "' is not a finite number",
                         e->Row());
        }
        c = stop;
        count++;
      }
      if (count == 0)
        throw XmlError(where + ": <" + tag + " " + n.attrs[a] + "=\"\">: expected a number", e->Row());
    }
  }
  if (tag == "limit" && e->Attribute("lower") && e->Attribute("upper")) {
    double lo = std::strtod(e->Attribute("lower"), nullptr), up = std::strtod(e->Attribute("upper"), nullptr);
    if (lo > up)
      throw XmlError(where + ": <limit lower=\"" + e->Attribute("lower") + "\" upper=\"" + e->Attribute("upper") +
                         "\">: lower > upper (write the smaller first)",
                     e->Row());
  }
  for (const TiXmlElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) check_numbers(c, where);
}

// urdfdom 3.0.1 (link.cpp, parseMaterial) logs a bad material as
//   CONSOLE_BRIDGE_logError(("Material [" + name + "] has malformed color rgba values: " + ...).c_str())
// so the material's name and its <color rgba> text become console_bridge's printf format: a '%s' in
// them reads through a garbage pointer and a '%n' writes to one (found by tests/fuzz/fuzz_urdf.c:
// SEGV, bad-free and heap-use-after-free in vsnprintf). The other text urdfdom puts in a format
// (sizes, radii, mass, origins) is checked to be numbers above. (element and its subtree) => throws
// XmlError on a '%' in a <material name> or a <color rgba> anywhere
void check_format_text(const TiXmlElement* e, const std::string& where) {
  const std::string tag = e->Value();
  const char* a = tag == "material" ? "name" : tag == "color" ? "rgba" : nullptr;
  const char* v = a ? e->Attribute(a) : nullptr;
  if (v && std::strchr(v, '%'))
    throw XmlError((where.empty() ? "" : where + ": ") + "<" + tag + " " + a + "=\"" + v +
                       "\">: '%' is refused here (urdfdom 3.0 logs this text as a printf format string)",
                   e->Row());
  for (const TiXmlElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) check_format_text(c, where);
}

void check_all_numbers(const std::string& xml) {
  TiXmlDocument doc;
  doc.Parse(xml.c_str());
  const TiXmlElement* robot = doc.Error() ? nullptr : doc.FirstChildElement("robot");
  if (!robot) return;
  for (const TiXmlElement* c = robot->FirstChildElement(); c; c = c->NextSiblingElement()) {
    const std::string t = c->Value();
    if (t == "link" || t == "joint") check_numbers(c, t + " '" + attr(c, "name") + "'");
    if (t == "link") check_format_text(c, "link '" + attr(c, "name") + "'");
    if (t == "material") check_format_text(c, "");
  }
}

// urdfdom builds its tree with shared_ptr links both ways before it looks for the root, so a file
// whose joints form a loop leaks that cycle when it is rejected. Find loops first (Kahn's
// algorithm over parent -> child edges) and reject them without calling urdfdom.
std::string find_loop(const std::string& xml) {
  TiXmlDocument doc;
  doc.Parse(xml.c_str());
  const TiXmlElement* robot = doc.Error() ? nullptr : doc.FirstChildElement("robot");
  if (!robot) return "";
  std::map<std::string, std::vector<std::string>> children;
  std::map<std::string, int> indegree;
  for (const TiXmlElement* j = robot->FirstChildElement("joint"); j; j = j->NextSiblingElement("joint")) {
    const TiXmlElement* p = j->FirstChildElement("parent");
    const TiXmlElement* c = j->FirstChildElement("child");
    if (!p || !c || !p->Attribute("link") || !c->Attribute("link")) continue;
    std::string pl = p->Attribute("link"), cl = c->Attribute("link");
    children[pl].push_back(cl);
    indegree[pl] += 0;
    indegree[cl] += 1;
  }
  std::vector<std::string> ready;
  for (const auto& kv : indegree)
    if (kv.second == 0) ready.push_back(kv.first);
  size_t done = 0;
  while (!ready.empty()) {
    std::string l = ready.back();
    ready.pop_back();
    done++;
    for (const std::string& c : children[l])
      if (--indegree[c] == 0) ready.push_back(c);
  }
  if (done == indegree.size()) return "";
  for (const auto& kv : indegree)
    if (kv.second > 0) return kv.first;
  return "";
}

void copy_msg(const std::string& s, char* msg, size_t msg_size) {
  if (!msg || msg_size == 0) return;
  size_t n = s.size() < msg_size - 1 ? s.size() : msg_size - 1;
  std::memcpy(msg, s.data(), n);
  msg[n] = 0;
}

}  // namespace

extern "C" kn_ushim_model* kn_ushim_parse(const char* xml, char* msg, size_t msg_size, int* line) {
  copy_msg("", msg, msg_size);
  if (line) *line = 0;
  if (!xml) {
    copy_msg("no URDF text", msg, msg_size);
    return nullptr;
  }
  kn_ushim_model* out = static_cast<kn_ushim_model*>(std::calloc(1, sizeof(kn_ushim_model)));
  if (!out) {
    copy_msg("out of memory", msg, msg_size);
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(g_parse_mutex);
  Capture capture;
  console_bridge::OutputHandler* previous = console_bridge::getOutputHandler();
  console_bridge::LogLevel previous_level = console_bridge::getLogLevel();
  console_bridge::useOutputHandler(&capture);
  console_bridge::setLogLevel(console_bridge::CONSOLE_BRIDGE_LOG_WARN);
  std::string error;
  try {
    std::string text(xml);
    check_utf8(text);
    check_all_numbers(text);
    std::string loop = find_loop(text);
    if (!loop.empty()) {
      error = "not a tree: the joints form a loop through link '" + loop +
              "' (knead rejects loops before urdfdom, which would report no root link)";
    } else {
      urdf::ModelInterfaceSharedPtr model = urdf::parseURDF(text);
      if (!model)
        error = "urdfdom rejected the file: " + capture.joined();
      else
        convert(*model, text, out);
    }
  } catch (const XmlError& e) {
    error = e.what();
    if (line) *line = e.line;
  } catch (const std::bad_alloc&) {
    error = "out of memory";
  } catch (const std::exception& e) {
    error = std::string("urdfdom rejected the file: ") + e.what();
  } catch (...) {
    error = "urdfdom failed with an unknown exception";
  }
  console_bridge::useOutputHandler(previous);
  console_bridge::setLogLevel(previous_level);
  if (!error.empty()) {
    copy_msg(error, msg, msg_size);
    kn_ushim_free(out);
    return nullptr;
  }
  return out;
}

extern "C" void kn_ushim_free(kn_ushim_model* m) {
  if (!m) return;
  for (int i = 0; i < m->nlink; i++) {
    kn_ushim_link* l = &m->links[i];
    for (int g = 0; g < l->ngeom; g++) {
      std::free(l->geoms[g].name);
      std::free(l->geoms[g].filename);
    }
    std::free(l->geoms);
    std::free(l->name);
  }
  for (int i = 0; i < m->njoint; i++) {
    std::free(m->joints[i].name);
    std::free(m->joints[i].mimic_joint);
  }
  for (int i = 0; i < m->nfilter_group; i++) {
    kn_ushim_filter_group* g = &m->filter_groups[i];
    for (int k = 0; k < g->nmember; k++) std::free(g->members[k]);
    for (int k = 0; k < g->nignore; k++) std::free(g->ignores[k]);
    std::free(g->members);
    std::free(g->ignores);
    std::free(g->name);
  }
  std::free(m->filter_groups);
  for (int i = 0; i < m->nnote; i++) std::free(m->notes[i]);
  std::free(m->notes);
  std::free(m->links);
  std::free(m->joints);
  std::free(m->name);
  std::free(m);
}
