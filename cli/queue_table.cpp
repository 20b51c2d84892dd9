#include "cli/queue_table.h"

#include <cstdio>

namespace dispatchd::cli {

std::string preview(const std::string& text, std::size_t n) {
  std::string out;
  std::size_t points = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) != 0x80 && ++points > n) return out + "...";
    out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : text[i];
  }
  return out;
}

staff::TargetClock target_clock(const Target& target, store::Time at) {
  if (!target.config) return {at, {}};
  return {at, staff::response_targets(target.config->staff.response_target_default_minutes,
                                      target.config->staff.response_target_minutes)};
}

void print_escalations(const std::vector<store::EscalationRow>& rows, const staff::TargetClock& clock, bool json) {
  if (json) {
    std::printf("%s\n", staff::escalations_json(rows, clock).c_str());
    return;
  }
  std::printf("%-5s %-9s %-21s %-8s %-16s %-10s %-20s %-17s %s\n", "ID", "STATUS", "REASON", "CHANNEL", "SENDER",
              "ASSIGNEE", "CREATED", "TARGET", "TEXT");
  for (const auto& row : rows) {
    const auto reading = staff::row_target(row, clock);
    std::printf("%-5lld %-9s %-21s %-8s %-16s %-10s %-20s %-17s %s\n", static_cast<long long>(row.id),
                std::string(store::to_sql(row.status)).c_str(), std::string(store::to_sql(row.reason)).c_str(),
                row.channel.c_str(), preview(row.sender, 16).c_str(), preview(row.assignee.value_or("-"), 10).c_str(),
                row.created_at.c_str(), reading ? staff::target_text(*reading).c_str() : "-",
                preview(row.text, 40).c_str());
  }
}

}  // namespace dispatchd::cli
