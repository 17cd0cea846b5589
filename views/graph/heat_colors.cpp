#include "views/graph/heat_colors.h"

#include <QEvent>
#include <QFontMetrics>
#include <QLinearGradient>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <array>
#include <cmath>

namespace lathe::views {
namespace {

struct Stop {
  double at;
  QRgb rgb;
};

// Pale warm grey, pale amber, amber, orange, red-orange, deep red: each darker than the last.
constexpr std::array<Stop, 6> kRamp = {{
    {0.0, 0xf1eee8},
    {0.2, 0xfae3a4},
    {0.4, 0xfcc05e},
    {0.6, 0xf88b3b},
    {0.8, 0xe0502b},
    {1.0, 0xa8151d},
}};

constexpr int kMargin = 10; // from the anchor's corner
constexpr int kPadding = 8; // inside the legend's frame
constexpr int kBarWidth = 180;
constexpr int kBarHeight = 10;

double linear(double channel) {
  return channel <= 0.04045 ? channel / 12.92 : std::pow((channel + 0.055) / 1.055, 2.4);
}

QString percent(double share) {
  return QStringLiteral("%1 %").arg(share * 100, 0, 'f', share > 0 && share < 0.1 ? 1 : 0);
}

} // namespace

QColor heatColor(double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0);
  std::size_t i = 1;
  while (i + 1 < kRamp.size() && kRamp[i].at < t)
    ++i;
  const Stop& a = kRamp[i - 1];
  const Stop& b = kRamp[i];
  const double f = (t - a.at) / (b.at - a.at);
  const auto channel = [f](int x, int y) { return static_cast<int>(std::lround(x + (y - x) * f)); };
  return QColor(channel(qRed(a.rgb), qRed(b.rgb)), channel(qGreen(a.rgb), qGreen(b.rgb)),
                channel(qBlue(a.rgb), qBlue(b.rgb)));
}

QColor readableTextOn(const QColor& fill) {
  const double luminance =
      0.2126 * linear(fill.redF()) + 0.7152 * linear(fill.greenF()) + 0.0722 * linear(fill.blueF());
  // Contrast with black, (L + 0.05) / 0.05, beats contrast with white, 1.05 / (L + 0.05), above
  // a luminance of about 0.18.
  return luminance > 0.179 ? QColor(0x1c, 0x1c, 0x1c) : QColor(Qt::white);
}

HeatLegend::HeatLegend(QWidget* anchor, QWidget* parent) : QWidget(parent), anchor_(anchor) {
  setObjectName(QStringLiteral("graphHeatLegend"));
  setAttribute(Qt::WA_TransparentForMouseEvents);
  anchor_->installEventFilter(this);
  hide();
}

void HeatLegend::setMaximumShare(double share) {
  maximum_ = std::clamp(share, 0.0, 1.0);
  resize(sizeHint());
  place();
  update();
}

void HeatLegend::setTitle(const QString& title) {
  title_ = title;
  resize(sizeHint());
  place();
  update();
}

QString HeatLegend::title() const {
  return title_.isEmpty() ? tr("Heat map: share of run time") : title_;
}

QSize HeatLegend::sizeHint() const {
  QFont bold = font();
  bold.setBold(true);
  const QFontMetrics title(bold), labels(font());
  const int width = std::max(kBarWidth, title.horizontalAdvance(this->title()));
  return {width + 2 * kPadding,
          title.height() + 4 + kBarHeight + 2 + labels.height() + 2 * kPadding - 2};
}

void HeatLegend::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  QColor back = palette().color(QPalette::Window);
  back.setAlpha(235);
  painter.setPen(QPen(palette().color(QPalette::Mid), 1));
  painter.setBrush(back);
  painter.drawRoundedRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5), 5, 5);

  QFont bold = font();
  bold.setBold(true);
  const QFontMetrics title(bold), labels(font());
  const int inner = width() - 2 * kPadding;
  painter.setFont(bold);
  painter.setPen(palette().color(QPalette::WindowText));
  painter.drawText(QRect(kPadding, kPadding - 1, inner, title.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, this->title());

  const QRectF bar(kPadding, kPadding - 1 + title.height() + 4, inner, kBarHeight);
  QLinearGradient gradient(bar.topLeft(), bar.topRight());
  for (const Stop& stop : kRamp)
    gradient.setColorAt(stop.at, QColor(stop.rgb));
  painter.setPen(QPen(palette().color(QPalette::Mid), 1));
  painter.setBrush(gradient);
  painter.drawRoundedRect(bar, 2, 2);

  painter.setFont(font());
  painter.setPen(palette().color(QPalette::WindowText));
  const QRect labelRow(kPadding, static_cast<int>(bar.bottom()) + 2, inner, labels.height());
  painter.drawText(labelRow, Qt::AlignLeft | Qt::AlignVCenter, percent(0));
  painter.drawText(labelRow, Qt::AlignHCenter | Qt::AlignVCenter, percent(maximum_ / 2));
  painter.drawText(labelRow, Qt::AlignRight | Qt::AlignVCenter, percent(maximum_));
}

bool HeatLegend::eventFilter(QObject* watched, QEvent* event) {
  if (watched == anchor_ && (event->type() == QEvent::Resize || event->type() == QEvent::Move))
    place();
  return QWidget::eventFilter(watched, event);
}

void HeatLegend::place() {
  if (!parentWidget())
    return;
  const QPoint corner = anchor_->mapTo(parentWidget(), QPoint(0, anchor_->height()));
  move(corner.x() + kMargin, corner.y() - height() - kMargin);
}

} // namespace lathe::views
